import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABRASF_V1_DEFINITIONS } from '../../src/engines/abrasf-v1/index.ts';
import { NFSEBRASIL_ERROR, nfseBrasilSchemaView } from '../../src/engines/abrasf-v1/providers/nfsebrasil.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { createNFSeBrasilService } from '../../src/sandbox/abrasf-v1/nfsebrasil.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { TAKER } from '../support/onboarding.ts';
import { normalized, preparedDocument, startRawXmlSandbox } from './raw-xml-env.ts';
import { describeConformance } from './suite.ts';

/**
 * NFSeBrasil (own rps.xsd, RPC/encoded SOAP 1.1 in `urn:loterpswsdl`, the access key `hashValidador` in every call,
 * nothing signed, no client certificate) against its sandbox, in Piumhi/MG (3151503). The sandbox processes a lote
 * at once (`holdMs` 0), so the first poll ends issued. The business rejection: a lote whose inscrição municipal is not
 * the one the key was issued for; the provider's refusals carry no codes (`NFSEBRASIL`).
 */
const KEY = '09e59b2c979ebf8d009a48c2043eee94';
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3151503',
  inscricaoMunicipal: '3810',
  cnae: '6201501',
  ...IBS_CBS_FRAMING,
});
const stranger = { ...project, inscricaoMunicipal: '9999' };

describeConformance({
  family: ABRASF_V1_DEFINITIONS['abrasf-v1:nfsebrasil']!,
  project,
  invoice: () => normalized(project),
  credentials: { accessToken: KEY },
  rejection: { project: stranger, invoice: normalized(stranger), code: NFSEBRASIL_ERROR },
  start: () =>
    startRawXmlSandbox({
      project,
      slug: 'nfsebrasil',
      create: (deps) => createNFSeBrasilService({ ...deps, holdMs: 0 }),
      settings: {
        path: '/__sandbox/nfsebrasil/settings',
        body: { keys: { [KEY]: { cnpj: project.cnpj, inscricaoMunicipal: '3810' } } },
      },
    }),
});

describe('NFSeBrasil: the message as it travels', () => {
  const family = ABRASF_V1_DEFINITIONS['abrasf-v1:nfsebrasil']!;
  const built = family.declaration.build({
    project,
    invoice: normalized(project),
    serie: '1',
    number: 1120,
    issuedAt: new Date('2026-01-05T12:00:00Z'),
    // biome-ignore lint/suspicious/noExplicitAny: the declaration of an unsigned layout never reads the certificate
    certificate: null as any,
  });

  it('is unqualified like the production messages, and valid in the schema namespace', () => {
    expect(built.xml).toMatch(
      /^<EnviarLoteRpsEnvio xmlns:xs="http:\/\/www\.nfsebrasil\.net\.br\/nfse\/rps\/xsd\/rps\.xsd">/,
    );
    expect(built.xml).toContain('<LoteRps codMunicipio="3151503" versao="1" Id="1120">');
    expect(built.xml).toContain('<InfRps Id="1120">');
    expect(validateXml('abrasf100NFSeBrasil', nfseBrasilSchemaView(built.xml))).toEqual({ ok: true });
    expect(validateXml('abrasf100NFSeBrasil', built.xml).ok).toBe(false);
  });

  it('writes every Valores element, the rate as a percentage, and no ItemListaServico', () => {
    expect(built.xml).toContain('<Aliquota>2.00</Aliquota>');
    expect(built.xml).toContain('<ValorDeducoes>0.00</ValorDeducoes>');
    expect(built.xml).toContain('<CodigoCnae>6201501</CodigoCnae>');
    expect(built.xml).not.toContain('ItemListaServico');
  });

  it('refuses what the layout cannot carry before a number is spent', () => {
    const lettered = { ...project, serieNfse: 'A1' };
    const refused = family.check(lettered, normalized(lettered)).map((e) => e.field);
    expect(refused).toContain('project.serieNfse');
  });
});

describe('NFSeBrasil: the access key, names with "&", and an RPS still in an unprocessed lote', () => {
  const family = ABRASF_V1_DEFINITIONS['abrasf-v1:nfsebrasil']!;
  let env: Awaited<ReturnType<typeof startRawXmlSandbox>>;
  let http: GovernmentHttpClient;
  let number = 500_000 + (Date.now() % 100_000);
  const engine = () =>
    createEngine(family, { http, endpoints: env.endpoints, signatureAlgorithm: 'rsa-sha1', validateBeforeSend: true });
  const connection = (accessToken: string) => ({
    certificate: env.certificate,
    ambiente: 2 as const,
    municipality: project.codigoMunicipio,
    credentials: { accessToken },
  });
  const prepare = (invoice = normalized(project)) => {
    return preparedDocument(engine(), { project, certificate: env.certificate, number: ++number, invoice });
  };

  beforeAll(async () => {
    env = await startRawXmlSandbox({
      project,
      slug: 'nfsebrasil',
      create: (deps) => createNFSeBrasilService({ ...deps, holdMs: 60_000 }),
      settings: { path: '/__sandbox/nfsebrasil/settings', body: { keys: { [KEY]: { cnpj: project.cnpj } } } },
    });
    http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
  });
  afterAll(async () => {
    await http?.close();
    await env?.close();
  });

  it('is refused, with the provider code, under a key the provider does not know', async () => {
    const outcome = await engine().issue(prepare(), connection('ffffffffffffffffffffffffffffffff'));
    expect(outcome.kind, JSON.stringify(outcome)).toBe('rejected');
    if (outcome.kind === 'rejected') expect(outcome.errorCode).toBe(NFSEBRASIL_ERROR);
  });

  it('sends a taker named with "&" (as `&amp;amp;`) and the provider reads it whole', async () => {
    const document = prepare(normalized(project, { tomador: { ...TAKER, nome: 'Silva & Filhos Ltda' } }));
    const outcome = await engine().issue(document, connection(KEY));
    expect(outcome.kind, JSON.stringify(outcome)).toBe('pending');
  });

  it('never reads an RPS the provider holds in an unprocessed lote as "none"', async () => {
    const document = prepare();
    expect((await engine().issue(document, connection(KEY))).kind).toBe('pending');
    const found = await engine().reconcile(document, connection(KEY));
    expect(found.kind, JSON.stringify(found)).not.toBe('ok');
  });
});
