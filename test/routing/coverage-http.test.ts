import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoices } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, type OnboardedProject, onboardProject, waitForInvoice } from '../support/onboarding.ts';

const CAMPINAS = '3509502'; // ISSCampinas (ABRASF 2.03), not adherent to the national environment
const ITATIBA = '3523404'; // fintelISS (ABRASF 2.02): a provider mapped but not implemented
const ITATIBA_ADDRESS = {
  logradouro: 'Avenida Barão de Itapema',
  numero: '100',
  bairro: 'Centro',
  cidade: 'Itatiba',
  uf: 'SP',
  cep: '13250000',
};
const CAMPINAS_ADDRESS = {
  logradouro: 'Avenida Francisco Glicério',
  numero: '1000',
  bairro: 'Centro',
  cidade: 'Campinas',
  uf: 'SP',
  cep: '13012100',
};

let t: TestService;
let p: OnboardedProject;

beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t);
});
afterAll(async () => {
  await t?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: JSON answers
async function lookup(q: string, key = p.apiKey): Promise<any> {
  return t.request('GET', `/cobertura/cidades?q=${encodeURIComponent(q)}`, { key });
}

describe('GET /cobertura/cidades', () => {
  it('answers the same for "sao paulo", "São Paulo" and "3550308": its own engine, implemented', async () => {
    const answers = await Promise.all(['sao paulo', 'São Paulo', '3550308'].map((q) => lookup(q)));
    for (const res of answers) expect(res.status, res.text).toBe(200);
    const [byName, byAccents, byCode] = answers.map((res) => res.body.data[0]);
    expect(byName).toEqual(byAccents);
    expect(byName).toEqual(byCode);
    expect(answers[2].body.data).toHaveLength(1);
    expect(byCode).toMatchObject({
      codigoIbge: '3550308',
      nome: 'São Paulo',
      uf: 'SP',
      status: 'covered',
      family: 'sao-paulo',
      routingId: 'sao-paulo:isssaopaulo@1.00',
      provider: 'ISSSaoPaulo',
      implemented: true,
      nationalEmitterAdherent: true,
    });
    expect(byCode.populacao).toBeGreaterThan(12_000_000);
    expect(byCode.engine.projectFields).toEqual(['codigoMunicipio', 'inscricaoMunicipal', 'codigoServicoSp']);
    expect(byCode.engine).toMatchObject({ auth: 'mtls', transport: 'soap11', credentials: ['certificate'] });
    expect(byCode.engine.capabilities).toMatchObject({ cancel: true, batch: true, pdf: 'portal' });
    expect(answers[0].body.registry.sources.map((s: { file: string }) => s.file)).toContain('ACBrNFSeXServicos.ini');
  });

  it('Rio de Janeiro: national-adherent, implemented here', async () => {
    const res = await lookup('rio de janeiro');
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toEqual({
      codigoIbge: '3304557',
      nome: 'Rio de Janeiro',
      uf: 'RJ',
      populacao: 6747815,
      status: 'covered',
      family: 'national',
      routingId: 'national',
      provider: 'PadraoNacional',
      layoutVersion: '1.01',
      implemented: true,
      nationalEmitterAdherent: true,
      nationalEmitterByChoice: false,
      engine: {
        projectFields: ['codigoMunicipio'],
        credentials: ['certificate'],
        auth: 'mtls',
        transport: 'rest-json',
        xmlSignature: true,
        capabilities: {
          cancel: true,
          substitution: true,
          batch: false,
          mode: 'sync',
          pdf: 'local',
          homologation: true,
        },
      },
    });
  });

  it('Ariquemes: Fiorilli ABRASF 2.00 with credentials in the body, implemented (abrasf-v2:fiorilli)', async () => {
    const res = await lookup('ARIQUEMES');
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({
      codigoIbge: '1100023',
      uf: 'RO',
      status: 'covered',
      family: 'abrasf-v2',
      routingId: 'abrasf-v2:fiorilli@2.00',
      provider: 'Fiorilli',
      layoutVersion: '2.00',
      implemented: true,
      engine: {
        projectFields: ['codigoMunicipio', 'inscricaoMunicipal'],
        credentials: ['certificate', 'municipalUser', 'municipalPassword'],
        auth: 'body-credentials',
        transport: 'soap11',
        capabilities: { cancel: true, substitution: true, batch: true, mode: 'both', pdf: 'portal' },
      },
    });
  });

  it('Caucaia/CE: no provider, not adherent → national_only_mei', async () => {
    const res = await lookup('caucaia');
    expect(res.body.data[0]).toMatchObject({
      codigoIbge: '2303709',
      uf: 'CE',
      status: 'national_only_mei',
      family: null,
      routingId: null,
      provider: null,
      implemented: false,
      nationalEmitterAdherent: false,
      engine: null,
    });
  });

  it('an unmapped municipality in the adhesion list is national for everyone; a provider without production service is not_covered', async () => {
    const adherent = (await lookup('1300029')).body.data[0];
    expect(adherent).toMatchObject({ status: 'covered', family: 'national', provider: null, implemented: true });
    expect(adherent.engine.credentials).toEqual(['certificate']);
    const citta = (await lookup('4300471')).body.data[0];
    expect(citta).toMatchObject({
      status: 'not_covered',
      family: 'dps-provider',
      provider: 'Citta',
      implemented: false,
    });
    expect(citta.engine.capabilities.homologation).toBe(true);
  });

  it('lists partial matches, exact names first, within the limit', async () => {
    const res = await t.request('GET', '/cobertura/cidades?q=campinas&limit=5', { key: p.apiKey });
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(1);
    expect(res.body.data.length).toBeLessThanOrEqual(5);
    expect(res.body.data[0]).toMatchObject({ codigoIbge: CAMPINAS, family: 'abrasf-v2', provider: 'ISSCampinas' });
    for (const m of res.body.data) expect(m.nome.toLowerCase()).toContain('campinas');
    expect((await lookup('9999999')).body.data).toEqual([]);
  });

  it('400 for a query of fewer than 2 letters or a code that is not 7 digits; keys and scopes', async () => {
    for (const q of ['a', ' é ', '123', '35503080', '']) {
      const res = await lookup(q);
      expect(res.status, q).toBe(400);
      expect(res.body.code).toBe('INVALID_QUERY');
      expect(res.body.errors[0].field).toBe('q');
    }
    const missing = await t.request('GET', '/cobertura/cidades', { key: p.apiKey });
    expect(missing.status).toBe(400);
    expect((await t.request('GET', '/cobertura/cidades?q=rio')).status).toBe(401);
    expect((await lookup('rio', p.orgToken)).status).toBe(403);
    const emitOnly = await t.request('POST', `/org/projects/${p.projectId}/api-keys`, {
      key: p.orgToken,
      body: { name: 'emit only', scopes: ['emit'] },
    });
    expect(emitOnly.status).toBe(201);
    const refused = await lookup('rio', emitOnly.body.key);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('INSUFFICIENT_SCOPE');
  });

  it('survives hostile query strings (4xx or 200, never 5xx)', async () => {
    const queries = [
      'q=%00%00',
      'q[]=rio',
      'q=rio&q=sao',
      `q=${'a'.repeat(5000)}`,
      'q=rio&limit=NaN',
      'q=rio&limit=1e309',
      'q=rio&limit=0',
      'q=%F0%9F%98%80%F0%9F%98%80',
      'q=%25%25',
      'q=.*',
    ];
    for (const q of queries) {
      const res = await t.request('GET', `/cobertura/cidades?${q}`, { key: p.apiKey });
      expect(res.status < 500, `${q.slice(0, 40)} → ${res.status} ${res.text.slice(0, 200)}`).toBe(true);
      if (res.status >= 400) expect(res.body.code, q.slice(0, 40)).toBe('INVALID_QUERY');
    }
    expect((await lookup('.*')).body.data).toEqual([]);
  });

  it('is in the OpenAPI document with the status definitions', async () => {
    const res = await t.request('GET', '/openapi.json');
    const op = res.body.paths['/api/v1/cobertura/cidades']?.get;
    expect(op).toBeTruthy();
    // the answer is a named component of the document (`$ref`)
    const ref: string = op.responses['200'].content['application/json'].schema.$ref;
    const item = res.body.components.schemas[ref.replace('#/components/schemas/', '')].properties.data.items;
    expect(item.properties.status.enum).toEqual(['covered', 'not_covered', 'national_only_mei']);
    expect(item.properties.status.description).toContain('national_only_mei: no municipal provider is known');
  });
});

describe('routing at project creation and issuing', () => {
  it('a Simples project in Itatiba (provider not implemented): warned at creation, 422 ENGINE_NOT_AVAILABLE at /emitir, nothing spent', async () => {
    const simples = await onboardProject(t, {
      cnpj: '11222333000505',
      project: { regimeTributario: '3', aliquotaSimples: 4, codigoMunicipio: ITATIBA, endereco: ITATIBA_ADDRESS },
    });
    const view = await t.request('GET', `/org/projects/${simples.projectId}`, { key: simples.orgToken });
    expect(view.body.codigoMunicipio).toBe(ITATIBA);
    const before = (await t.request('GET', '/org/settings', { key: simples.orgToken })).body.subscription.creditsUsed;

    const res = await t.request('POST', '/emitir', { key: simples.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(422);
    expect(res.body.code).toBe('ENGINE_NOT_AVAILABLE');
    expect(res.body).toMatchObject({
      municipality: { codigoIbge: ITATIBA, nome: 'Itatiba', uf: 'SP' },
      provider: 'fintelISS',
      family: 'abrasf-v2',
      routingId: 'abrasf-v2:finteliss@2.02',
      coverageStatus: 'covered',
      regimeTributario: '3',
    });
    expect(res.body.detail).toContain('fintelISS');
    expect(res.body.errors[0].field).toBe('project.codigoMunicipio');

    const batch = await t.request('POST', '/emitir/batch', {
      key: simples.apiKey,
      body: { items: [invoiceBody(), invoiceBody()] },
    });
    expect(batch.status).toBe(422);
    expect(batch.body.code).toBe('ENGINE_NOT_AVAILABLE');

    const after = (await t.request('GET', '/org/settings', { key: simples.orgToken })).body.subscription.creditsUsed;
    expect(after).toBe(before);
    const numbering = await t.request('GET', `/org/projects/${simples.projectId}/numeracao`, { key: simples.orgToken });
    expect(numbering.status).toBe(200);
    expect(numbering.body.nfse).toMatchObject({ ultimoNumero: 0, proximoNumero: 1 });
  });

  it('warns at creation and when municipality or regime change, and stops warning when the project becomes MEI', async () => {
    const created = await t.request('POST', '/org/projects', {
      key: p.orgToken,
      body: {
        name: 'Itatiba Simples',
        cnpj: '11222333000696',
        razaoSocial: 'ITATIBA SIMPLES LTDA',
        regimeTributario: '3',
        codigoMunicipio: ITATIBA,
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.warnings).toHaveLength(1);
    expect(created.body.warnings[0]).toMatchObject({ code: 'ENGINE_NOT_AVAILABLE', field: 'codigoMunicipio' });
    expect(created.body.warnings[0].message).toContain('Itatiba/SP (3523404)');
    const id = created.body.id;
    const patch = (body: Record<string, unknown>) =>
      t.request('PATCH', `/org/projects/${id}`, { key: p.orgToken, body });
    expect((await patch({ regimeTributario: '2' })).body.warnings).toEqual([]);
    expect((await patch({ regimeTributario: '1' })).body.warnings[0].code).toBe('ENGINE_NOT_AVAILABLE');
    expect((await patch({ codigoMunicipio: '3304557' })).body.warnings).toEqual([]);
    expect((await patch({ codigoMunicipio: '2303709' })).body.warnings[0].message).toContain('Caucaia');
    // a change that does not touch routing does not repeat the warning
    expect((await patch({ description: 'x' })).body.warnings).toEqual([]);
  });

  it('a MEI project in Campinas is issued through the national environment', async () => {
    const mei = await onboardProject(t, {
      cnpj: '11222333000777',
      project: { regimeTributario: '2', codigoMunicipio: CAMPINAS, endereco: CAMPINAS_ADDRESS },
    });
    const res = await t.request('POST', '/emitir', {
      key: mei.apiKey,
      body: invoiceBody(),
    });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, mei.apiKey, res.body.invoiceId, 30_000);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    const [row] = await t.service.ctx.db.select().from(invoices).where(eq(invoices.id, res.body.invoiceId));
    expect(row!.engine).toBe('national');
    expect(row!.declarationXml).toContain(`<cLocEmi>${CAMPINAS}</cLocEmi>`);
    expect(row!.declarationXml).toContain('<opSimpNac>2</opSimpNac>');
    // the sandbox issued it (a non-MEI DPS from Campinas would be E0037 there)
    const xml = await t.request('GET', `/invoices/${res.body.invoiceId}/xml`, { key: mei.apiKey });
    const text = xml.status === 302 ? await (await fetch(xml.headers.get('location')!)).text() : xml.text;
    expect(text).toContain('<cLocEmi>3509502</cLocEmi>');
  });
});
