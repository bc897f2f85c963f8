import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { provisionSandboxIdentity, type SandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SefinSandbox, startSefinSandbox } from '../../src/sandbox/sefin/server.ts';

/**
 * The sandbox's ADN "Parâmetros Municipais" API over real HTTPS with a client certificate, checked against the
 * official OpenAPI (`API NFS-e - ADN Parâmetros Municipais (v1)`): paths under `/parametrizacao`, the
 * `Resultado…` shapes with `mensagem`, `aliquotas` keyed by `II.SS.DD.NNN` with `Incidencia`/`Aliq`/`DtIni`/`DtFim`.
 */

let dir: string;
let identity: SandboxIdentity;
let sandbox: SefinSandbox;
let withCert: Agent;
let anonymous: Agent;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'adn-sandbox-'));
  identity = provisionSandboxIdentity(join(dir, 'identity'));
  const ca = createCertificateAuthority('AC Teste ICP-Brasil');
  const files = createA1Certificate({ cnpj: '11222333000181', name: 'EMPRESA', password: 'x', issuer: ca });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  sandbox = await startSefinSandbox({ tls: identity.tls, signer: identity.signer });
  withCert = new Agent({ connect: { key: read.value.keyPem, cert: read.value.certPem, ca: identity.caPem } });
  anonymous = new Agent({ connect: { ca: identity.caPem } });
});
afterAll(async () => {
  await withCert?.close();
  await anonymous?.close();
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

async function get(path: string, env = 'producaorestrita', agent = withCert) {
  const res = await request(`${sandbox.url}/${env}/parametrizacao${path}`, { dispatcher: agent });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

describe('ADN Parâmetros Municipais (sandbox)', () => {
  it('answers the convênio of a seeded municipality, 404 for another, 400 for a malformed code', async () => {
    const rio = await get('/3304557/convenio');
    expect(rio.status).toBe(200);
    expect(rio.body).toEqual({
      mensagem: expect.any(String),
      parametrosConvenio: {
        tipoConvenioDeserializationSetter: 1,
        aderenteAmbienteNacional: 1,
        aderenteEmissorNacional: 1,
        situacaoEmissaoPadraoContribuintesRFB: 1,
        aderenteMAN: 0,
        permiteAproveitametoDeCreditos: false,
      },
    });
    const unknown = await get('/3550308/convenio');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ mensagem: expect.any(String), parametrosConvenio: null });
    expect((await get('/33/convenio')).status).toBe(400);
    // both environments
    expect((await get('/3304557/convenio', 'producao')).status).toBe(200);
  });

  it('answers rates by II.SS.DD.NNN and competência in the official shape', async () => {
    const curitiba = await get('/4106902/01.01.01.000/2026-10-01/aliquota');
    expect(curitiba).toEqual({
      status: 200,
      body: {
        mensagem: 'Alíquotas recuperadas com sucesso.',
        aliquotas: { '01.01.01.000': [{ Incidencia: 'SIM', Aliq: 5, DtIni: '2022-12-30T00:00:00', DtFim: null }] },
      },
    });
    // Rio broke 01.01.01 down: no .000, breakdowns .001 and .002
    expect((await get('/3304557/01.01.01.000/2026-10-01/aliquota')).status).toBe(404);
    const rio = await get('/3304557/01.01.01.001/2026-10-01T00:00:00/aliquota');
    expect(rio.status).toBe(200);
    expect(Object.keys(rio.body.aliquotas as object)).toEqual(['01.01.01.001']);
    expect((await get('/3304557/01.01.01.003/2026-10-01/aliquota')).body).toEqual({
      mensagem: expect.any(String),
      aliquotas: null,
    });
    // the rate in force at the competência; the history has them all
    const before = await get('/4314902/01.01.01.001/2025-06-01/aliquota');
    const after = await get('/4314902/01.01.01.001/2026-06-01/aliquota');
    expect((before.body.aliquotas as Record<string, { Aliq: number }[]>)['01.01.01.001']![0]!.Aliq).toBe(3);
    expect((after.body.aliquotas as Record<string, { Aliq: number }[]>)['01.01.01.001']![0]!.Aliq).toBe(2);
    const history = await get('/4314902/01.01.01.001/historicoaliquotas');
    expect((history.body.aliquotas as Record<string, unknown[]>)['01.01.01.001']).toEqual([
      { Incidencia: 'SIM', Aliq: 3, DtIni: '2023-01-01T00:00:00', DtFim: '2025-12-31T00:00:00' },
      { Incidencia: 'SIM', Aliq: 2, DtIni: '2026-01-01T00:00:00', DtFim: null },
    ]);
  });

  it('refuses malformed parameters (400) and requests without a client certificate (403)', async () => {
    expect((await get('/3304557/010101/2026-10-01/aliquota')).status).toBe(400);
    expect((await get('/3304557/01.01.01.001/2026-13-01/aliquota')).status).toBe(400);
    expect((await get('/abc/01.01.01.001/2026-10-01/aliquota')).status).toBe(400);
    expect((await get('/3304557/convenio', 'producaorestrita', anonymous)).status).toBe(403);
    expect((await get('/3304557/nada')).status).toBe(404);
  });

  it('answers the other read operations in their shapes', async () => {
    const retencoes = await get('/3304557/2026-10-01/retencoes');
    expect(retencoes.status).toBe(200);
    expect(retencoes.body.retencoes).toEqual({
      artigoSexto: { habilitado: false, historico: [] },
      retencoesMunicipais: [],
    });
    expect((await get('/3304557/01.01.01.001/2026-10-01/regimes_especiais')).body).toMatchObject({
      regimesEspeciais: {},
    });
    expect((await get('/3304557/123/2026-10-01/beneficio')).status).toBe(404);
  });
});
