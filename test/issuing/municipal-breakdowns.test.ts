import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adnParametersCache, invoices } from '../../src/db/schema.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';

type Warning = { code: string; field: string | null; message: string };
/** The municipal step's warnings (the rules' own, such as PROJECT_DEFAULT_APPLIED, are tested in fiscal-rules). */
const municipal = (warnings: Warning[]) => warnings.filter((w) => w.code.startsWith('CTRIBMUN_'));

/**
 * Municipal breakdowns (cTribMun) and parametrised rates end to end, over HTTP through the harness with the
 * embedded sandbox answering both Sefin and the ADN "Parâmetros Municipais" API (seed: src/sandbox/adn/seed.ts):
 * GET /codigos, the injection into the signed DPS, a sent value kept / ignored / refused (E0314), the rate check
 * (E0617), the batch, the cache table and its TTL, and Salvador's 7-digit code.
 */

let t: TestService;
let rio: OnboardedProject;
let curitiba: OnboardedProject;

const address = (cidade: string, uf: string, cep: string) => ({
  logradouro: 'Rua Primeiro de Março',
  numero: '10',
  bairro: 'Centro',
  cidade,
  uf,
  cep,
});

beforeAll(async () => {
  t = await startTestService();
  rio = await onboardProject(t, {
    rateLimitPerMinute: 100_000,
    project: { codigoMunicipio: '3304557', endereco: address('Rio de Janeiro', 'RJ', '20010000') },
  });
  curitiba = await onboardProject(t, {
    cnpj: '45997418000153',
    rateLimitPerMinute: 100_000,
    project: { codigoMunicipio: '4106902', endereco: address('Curitiba', 'PR', '80010000') },
  });
});
afterAll(async () => {
  await t?.close();
});

async function storedDps(invoiceId: string): Promise<string> {
  const [row] = await t.service.ctx.db.select().from(invoices).where(eq(invoices.id, invoiceId));
  return row!.declarationXml!;
}

async function issue(p: OnboardedProject, body: Record<string, unknown>) {
  const res = await t.request('POST', '/emitir', { key: p.apiKey, body });
  expect(res.status, res.text).toBe(202);
  const status = await waitForInvoice(t, p.apiKey, res.body.invoiceId);
  expect(status.status, JSON.stringify(status)).toBe('issued');
  return { accepted: res.body, status, dps: await storedDps(res.body.invoiceId) };
}

describe('GET /codigos', () => {
  it('lists the breakdowns of a service in a municipality of the sandbox parametrisation', async () => {
    const res = await t.request('GET', '/codigos?codigo=010101&ibge=3304557&competencia=2026-10', { key: rio.apiKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      codigo: '010101',
      descricao: 'Análise e desenvolvimento de sistemas.',
      ibge: '3304557',
      municipio: 'Rio de Janeiro',
      uf: 'RJ',
      competencia: '2026-10',
      exigeDesdobramento: true,
      semDesdobramento: null,
      desdobramentos: [
        {
          codigoTributacaoMunicipal: '001',
          codigoServicoAdn: '01.01.01.001',
          descricao: 'Análise e desenvolvimento de sistemas. (desdobramento municipal 001)',
          origemDescricao: 'lista-nacional',
          padrao: true,
          aliquota: 5,
          incidencia: 'SIM',
          vigenciaInicio: '2023-01-01',
          vigenciaFim: null,
        },
        {
          codigoTributacaoMunicipal: '002',
          codigoServicoAdn: '01.01.01.002',
          descricao: 'Análise e desenvolvimento de sistemas. (desdobramento municipal 002)',
          origemDescricao: 'lista-nacional',
          padrao: false,
          aliquota: 5,
          incidencia: 'SIM',
          vigenciaInicio: '2023-01-01',
          vigenciaFim: null,
        },
      ],
      fonte: { api: 'ADN Parâmetros Municipais', ambiente: 'homologacao', consultadoEm: expect.any(String) },
    });
  });

  it('answers a service without breakdown, an optional breakdown, a rate in force and an empty list', async () => {
    const curitibaCodes = await t.request('GET', '/codigos?codigo=010101&ibge=4106902', { key: rio.apiKey });
    expect(curitibaCodes.body).toMatchObject({
      exigeDesdobramento: false,
      semDesdobramento: { aliquota: 5, vigenciaInicio: '2022-12-30' },
      desdobramentos: [],
    });
    const bh = await t.request('GET', '/codigos?codigo=010101&ibge=3106200', { key: rio.apiKey });
    expect(bh.body).toMatchObject({
      exigeDesdobramento: false,
      semDesdobramento: { aliquota: 2.5 },
      desdobramentos: [{ codigoTributacaoMunicipal: '001', padrao: false, aliquota: 2 }],
    });
    const poa2025 = await t.request('GET', '/codigos?codigo=010101&ibge=4314902&competencia=2025-06', {
      key: rio.apiKey,
    });
    const poa2026 = await t.request('GET', '/codigos?codigo=010101&ibge=4314902&competencia=2026-06', {
      key: rio.apiKey,
    });
    expect(poa2025.body.desdobramentos.map((d: { aliquota: number }) => d.aliquota)).toEqual([3, 3]);
    expect(poa2026.body.desdobramentos.map((d: { aliquota: number }) => d.aliquota)).toEqual([2, 3]);
    const manaus = await t.request('GET', '/codigos?codigo=010101&ibge=1302603', { key: rio.apiKey });
    expect(manaus.status).toBe(200);
    expect(manaus.body).toMatchObject({ exigeDesdobramento: false, semDesdobramento: null, desdobramentos: [] });
  });

  it('400 naming the malformed parameter, 404 for an unknown municipality, 401 without a key', async () => {
    const cases: [string, string[]][] = [
      ['/codigos?ibge=3304557', ['codigo']],
      ['/codigos?codigo=0101&ibge=3304557', ['codigo']],
      ['/codigos?codigo=999999&ibge=3304557', ['codigo']],
      ['/codigos?codigo=010101', ['ibge']],
      ['/codigos?codigo=010101&ibge=33045', ['ibge']],
      ['/codigos?codigo=abc&ibge=x', ['codigo', 'ibge']],
      ['/codigos?codigo=010101&ibge=3304557&competencia=2026-13', ['competencia']],
    ];
    for (const [path, fields] of cases) {
      const res = await t.request('GET', path, { key: rio.apiKey });
      expect(res.status, path).toBe(400);
      expect(res.body.code).toBe('INVALID_QUERY');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(fields);
    }
    const notIbge = await t.request('GET', '/codigos?codigo=010101&ibge=9999999', { key: rio.apiKey });
    expect(notIbge.status).toBe(404);
    expect(notIbge.body.code).toBe('MUNICIPALITY_NOT_FOUND');
    // a real municipality the ADN has no parametrisation for
    const notAdn = await t.request('GET', '/codigos?codigo=010101&ibge=3550308', { key: rio.apiKey });
    expect(notAdn.status).toBe(404);
    expect(notAdn.body.code).toBe('MUNICIPALITY_NOT_FOUND');
    expect(notAdn.body.detail).toContain('ADN');
    expect((await t.request('GET', '/codigos?codigo=010101&ibge=3304557')).status).toBe(401);
  });

  it('409 when the project has no certificate for the mutual TLS of the ADN (and nothing is cached)', async () => {
    const org = await t.createOrganization('pro');
    const project = await t.request('POST', '/org/projects', {
      key: org.token,
      body: { name: 'Sem certificado', cnpj: '45997418000153', razaoSocial: 'SEM CERTIFICADO LTDA' },
    });
    expect(project.status, project.text).toBe(201);
    const key = await t.request('POST', `/org/projects/${project.body.id}/api-keys`, {
      key: org.token,
      body: { name: 'k' },
    });
    const res = await t.request('GET', '/codigos?codigo=010701&ibge=3106200', { key: key.body.key });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'PROJECT_CERTIFICATE_REQUIRED', certificateCode: 'CERTIFICATE_MISSING' });
  });

  it('caches the ADN answers and asks again once they are older than the TTL', async () => {
    const path = '3304557/01.01.01.001/2026-09-01/aliquota';
    const first = await t.request('GET', '/codigos?codigo=010101&ibge=3304557&competencia=2026-09', {
      key: rio.apiKey,
    });
    const rows = () =>
      t.service.ctx.db
        .select()
        .from(adnParametersCache)
        .where(and(eq(adnParametersCache.ambiente, 2), eq(adnParametersCache.path, path)));
    const [cached] = await rows();
    expect(cached).toMatchObject({ status: 200 });
    expect(cached!.body).toMatchObject({ aliquotas: { '01.01.01.001': [{ Aliq: 5 }] } });
    // .000 (none), .001, .002 and the first missing one (.003) are cached too, 404s included
    const all = await t.service.ctx.db
      .select({ path: adnParametersCache.path, status: adnParametersCache.status })
      .from(adnParametersCache)
      .where(sql`${adnParametersCache.path} like '3304557/01.01.01.%/2026-09-01/aliquota'`);
    expect(all.map((r) => `${r.path.split('/')[1]} ${r.status}`).sort()).toEqual([
      '01.01.01.000 404',
      '01.01.01.001 200',
      '01.01.01.002 200',
      '01.01.01.003 404',
    ]);
    const again = await t.request('GET', '/codigos?codigo=010101&ibge=3304557&competencia=2026-09', {
      key: rio.apiKey,
    });
    expect(again.body.fonte.consultadoEm).toBe(first.body.fonte.consultadoEm);
    expect((await rows())[0]!.fetchedAt.getTime()).toBe(cached!.fetchedAt.getTime());
    // older than the TTL (default 24 h): asked again on demand
    await t.service.ctx.db
      .update(adnParametersCache)
      .set({ fetchedAt: sql`${adnParametersCache.fetchedAt} - interval '2 days'` })
      .where(sql`${adnParametersCache.path} like '3304557/%'`);
    const refreshed = await t.request('GET', '/codigos?codigo=010101&ibge=3304557&competencia=2026-09', {
      key: rio.apiKey,
    });
    expect(new Date(refreshed.body.fonte.consultadoEm).getTime()).toBeGreaterThan(
      new Date(first.body.fonte.consultadoEm).getTime(),
    );
    expect((await rows())[0]!.fetchedAt.getTime()).toBeGreaterThan(cached!.fetchedAt.getTime());
  });
});

describe('POST /emitir with municipal breakdowns', () => {
  it('injects the first breakdown where the municipality requires one: in the 202, the status and the signed DPS', async () => {
    const { accepted, status, dps } = await issue(rio, invoiceBody({ valores: { total: 1000, aliquotaIss: 5 } }));
    const injected = {
      code: 'CTRIBMUN_INJECTED',
      field: 'servico.codigoTributacaoMunicipal',
      message: expect.stringContaining('(001)'),
    };
    expect(municipal(accepted.warnings)).toEqual([injected]);
    expect(municipal(status.warnings)).toEqual([injected]);
    expect(dps).toContain('<cServ><cTribNac>010101</cTribNac><cTribMun>001</cTribMun><xDescServ>');
    expect(dps).toContain('<Signature');
    expect(validateXml('DPS', dps)).toEqual({ ok: true });
    // the government's NFS-e: rate parametrised by the municipality, the breakdown's text in xTribMun
    const [row] = await t.service.ctx.db.select().from(invoices).where(eq(invoices.id, accepted.invoiceId));
    expect(row!.nfseXml).toContain('<pAliqAplic>5.00</pAliqAplic>');
    expect(row!.nfseXml).toMatch(/<xTribMun>[^<]+<\/xTribMun>/);
    // the municipality's text of the breakdown, learned from that NFS-e, now describes it in GET /codigos
    const codes = await t.request('GET', '/codigos?codigo=010101&ibge=3304557', { key: rio.apiKey });
    expect(codes.body.desdobramentos[0]).toMatchObject({
      codigoTributacaoMunicipal: '001',
      descricao: 'Análise e desenvolvimento de sistemas sob encomenda',
      origemDescricao: 'nfse',
    });
    expect(codes.body.desdobramentos[1]).toMatchObject({
      codigoTributacaoMunicipal: '002',
      origemDescricao: 'lista-nacional',
    });
    // the stored request carries the injected value, so a retried job builds the same DPS
    expect((row!.request as { servico: { codigoTributacaoMunicipal: string } }).servico.codigoTributacaoMunicipal).toBe(
      '001',
    );
  });

  it('keeps a sent breakdown that exists; refuses one the municipality does not have (E0314)', async () => {
    const kept = await issue(
      rio,
      invoiceBody({
        servico: { descricao: 'Sistemas para órgãos públicos', codigo: '010101', codigoTributacaoMunicipal: '002' },
        valores: { total: 800, aliquotaIss: 5 },
      }),
    );
    expect(municipal(kept.accepted.warnings)).toEqual([]);
    expect(kept.dps).toContain('<cTribMun>002</cTribMun>');

    const refused = await t.request('POST', '/emitir', {
      key: rio.apiKey,
      body: invoiceBody({
        servico: { descricao: 'x', codigo: '010101', codigoTributacaoMunicipal: '009' },
        valores: { total: 800, aliquotaIss: 5 },
      }),
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      code: 'MUNICIPAL_BREAKDOWN_INVALID',
      errors: [{ field: 'servico.codigoTributacaoMunicipal', message: expect.stringContaining('E0314') }],
      governmentCode: 'E0314',
      allowed: ['001', '002'],
    });
  });

  it("refuses a rate other than the municipality's parametrised one before a number is spent (E0617)", async () => {
    const res = await t.request('POST', '/emitir', {
      key: rio.apiKey,
      body: invoiceBody({ valores: { total: 1000, aliquotaIss: 2 } }),
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'ISS_RATE_MISMATCH',
      errors: [{ field: 'valores.aliquotaIss', message: expect.stringContaining('E0617') }],
      governmentCode: 'E0617',
      expectedRate: 5,
      hint: 'send valores.aliquotaIss 5',
    });
    const count = await t.service.ctx.db
      .select({ n: sql<number>`count(*)`.mapWith(Number) })
      .from(invoices)
      .where(eq(invoices.projectId, rio.projectId));
    // only the invoices of the previous cases exist: nothing was accepted for this request
    expect(count[0]!.n).toBe(2);
  });

  it('ignores a sent breakdown where the municipality has none (CTRIBMUN_IGNORED)', async () => {
    const { accepted, status, dps } = await issue(
      curitiba,
      invoiceBody({
        servico: { descricao: 'Desenvolvimento', codigo: '010101', codigoTributacaoMunicipal: '001' },
        valores: { total: 500, aliquotaIss: 5 },
      }),
    );
    const ignored = {
      code: 'CTRIBMUN_IGNORED',
      field: 'servico.codigoTributacaoMunicipal',
      message: expect.stringContaining('ignored'),
    };
    expect(municipal(accepted.warnings)).toEqual([ignored]);
    expect(municipal(status.warnings)).toEqual([ignored]);
    expect(dps).not.toContain('<cTribMun>');
    expect(validateXml('DPS', dps)).toEqual({ ok: true });
  });

  it('decides per item of a batch and returns each item its warnings', async () => {
    const res = await t.request('POST', '/emitir/batch', {
      key: rio.apiKey,
      body: {
        items: [
          invoiceBody({ valores: { total: 100, aliquotaIss: 5 } }),
          invoiceBody({
            servico: { descricao: 'Sistemas', codigo: '010101', codigoTributacaoMunicipal: '002' },
            valores: { total: 200, aliquotaIss: 5 },
          }),
        ],
      },
    });
    expect(res.status, res.text).toBe(202);
    // each item's warnings, relative to the item's own body (the rules' warnings, e.g. project defaults, aside)
    const items = res.body.items.map((i: { warnings: Warning[] }) => ({ ...i, warnings: municipal(i.warnings) }));
    expect(items).toEqual([
      {
        index: 0,
        invoiceId: expect.any(String),
        warnings: [
          {
            code: 'CTRIBMUN_INJECTED',
            field: 'servico.codigoTributacaoMunicipal',
            message: expect.any(String),
          },
        ],
      },
      { index: 1, invoiceId: expect.any(String), warnings: [] },
    ]);
    const [first, second] = await Promise.all(
      res.body.items.map((i: { invoiceId: string }) => waitForInvoice(t, rio.apiKey, i.invoiceId)),
    );
    expect([first.status, second.status]).toEqual(['issued', 'issued']);
    expect(await storedDps(res.body.items[0].invoiceId)).toContain('<cTribMun>001</cTribMun>');
    expect(await storedDps(res.body.items[1].invoiceId)).toContain('<cTribMun>002</cTribMun>');

    const bad = await t.request('POST', '/emitir/batch', {
      key: rio.apiKey,
      body: { items: [invoiceBody({ valores: { total: 100, aliquotaIss: 5 } }), invoiceBody()] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'ISS_RATE_MISMATCH', errors: [{ field: 'items.1.valores.aliquotaIss' }] });
  });
});

describe("Salvador's 7-digit municipal taxation code (spec 4.7.4)", () => {
  it('carries the item and subitem in cTribNac and the last 3 digits in cTribMun; elsewhere 7 digits are refused', async () => {
    const salvador = await onboardProject(t, {
      cnpj: '39847728000199',
      rateLimitPerMinute: 100_000,
      project: {
        codigoMunicipio: '2927408',
        endereco: address('Salvador', 'BA', '40010000'),
        regimeTributario: '2',
      },
    });
    const body = invoiceBody({
      servico: { descricao: 'Desenvolvimento de sistemas', codigo: '010101', codigoTributacaoMunicipal: '0101009' },
      valores: { total: 300, aliquotaIss: 0 },
    });
    const res = await t.request('POST', '/emitir', { key: salvador.apiKey, body });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, salvador.apiKey, res.body.invoiceId);
    const dps = await storedDps(res.body.invoiceId);
    expect(dps).toContain('<cTribNac>010101</cTribNac><cTribMun>009</cTribMun>');
    expect(validateXml('DPS', dps)).toEqual({ ok: true });
    expect(status.status, JSON.stringify(status)).toBe('issued');

    const mismatch = await t.request('POST', '/emitir', {
      key: salvador.apiKey,
      body: { ...body, servico: { ...body.servico, codigoTributacaoMunicipal: '0102009' } },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors[0].field).toBe('servico.codigoTributacaoMunicipal');

    const elsewhere = await t.request('POST', '/emitir', {
      key: rio.apiKey,
      body: invoiceBody({
        servico: { descricao: 'x', codigo: '010101', codigoTributacaoMunicipal: '0101001' },
        valores: { total: 100, aliquotaIss: 5 },
      }),
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.body).toMatchObject({
      code: 'MUNICIPAL_BREAKDOWN_INVALID',
      errors: [{ field: 'servico.codigoTributacaoMunicipal', message: expect.stringContaining('Salvador') }],
    });
  });
});

// last: it stops the embedded sandbox
describe('when the ADN does not answer', () => {
  it('uses a stale cached answer, answers 503 without one, and lets an emission go on unchanged', async () => {
    await t.service.ctx.db
      .update(adnParametersCache)
      .set({ fetchedAt: sql`${adnParametersCache.fetchedAt} - interval '3 days'` })
      .where(sql`${adnParametersCache.path} like '3304557/%'`);
    await t.service.sandbox!.close();

    const stale = await t.request('GET', '/codigos?codigo=010101&ibge=3304557&competencia=2026-09', {
      key: rio.apiKey,
    });
    expect(stale.status, stale.text).toBe(200);
    expect(
      stale.body.desdobramentos.map((d: { codigoTributacaoMunicipal: string }) => d.codigoTributacaoMunicipal),
    ).toEqual(['001', '002']);
    expect(Date.now() - new Date(stale.body.fonte.consultadoEm).getTime()).toBeGreaterThan(2 * 86_400_000);

    const uncached = await t.request('GET', '/codigos?codigo=170101&ibge=3304557&competencia=2026-09', {
      key: rio.apiKey,
    });
    expect(uncached.status).toBe(503);
    expect(uncached.body.code).toBe('SERVICE_UNAVAILABLE');

    // nothing cached for this month: accepted as sent, no adjustment (the government applies its own rules)
    const accepted = await t.request('POST', '/emitir', {
      key: rio.apiKey,
      body: invoiceBody({
        servico: { descricao: 'Sistemas', codigo: '010101', codigoTributacaoMunicipal: '002' },
        valores: { total: 100, aliquotaIss: 5 },
        competencia: '2026-08',
      }),
    });
    expect(accepted.status, accepted.text).toBe(202);
    expect(municipal(accepted.body.warnings)).toEqual([]);
  });
});
