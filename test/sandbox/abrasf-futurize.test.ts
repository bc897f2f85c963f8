import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { FUTURIZE_CONFIG } from '../../src/engines/abrasf-v2/providers/futurize.ts';
import type { OperationRequest, SendContext } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import type { PreparedDocument } from '../../src/engines/types.ts';
import { FUTURIZE_PROFILE } from '../../src/sandbox/abrasf-v2/futurize.ts';
import { signXml } from '../../src/xml/sign.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { normalized, startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * The ABRASF sandbox in its Futurize profile on raw requests: no client certificate asked for, the derived XSD
 * (E160 for an ItemListaServico), RecepcionarLoteRpsSincrono only with EnviarLoteRpsEnvio (a SOAP fault for the
 * official EnviarLoteRpsSincronoEnvio), and the engine's side: escaped strings, CTribNac/cNBS, cNBS required.
 */
const ABRASF = 'http://www.abrasf.org.br/nfse.xsd';
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '1502004',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const servico = { descricao: 'Desenvolvimento de software sob encomenda', codigo: '010101', nbs: '115021000' };
const family = defineAbrasfProvider(FUTURIZE_CONFIG);
let numbers = 800_000 + (Date.now() % 100_000);
type Env = Awaited<ReturnType<typeof startAbrasfSandbox>>;
let env: Env;
let http: GovernmentHttpClient;

beforeAll(async () => {
  env = await startAbrasfSandbox(FUTURIZE_PROFILE, project);
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
});
afterAll(async () => {
  await http?.close();
  await env?.close();
});

function rps(edit: (xml: string) => string = (x) => x): string {
  const built = family.declaration.build({
    project,
    invoice: normalized(project, { servico }),
    serie: '1',
    number: ++numbers,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  });
  const key = { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem };
  return signXml(edit(built.xml), { elementName: 'InfDeclaracaoPrestacaoServico', key });
}

const escapeText = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const CABEC = `<cabecalho versao="2.02" xmlns="${ABRASF}"><versaoDados>2.02</versaoDados></cabecalho>`;
const op = (name: string, dados: string) =>
  `<nfse:${name}Request xmlns:nfse="http://nfse.abrasf.org.br"><nfseCabecMsg>${escapeText(CABEC)}</nfseCabecMsg>` +
  `<nfseDadosMsg>${escapeText(dados)}</nfseDadosMsg></nfse:${name}Request>`;
const lote = (root: string, signedRps: string) =>
  `<${root} xmlns="${ABRASF}"><LoteRps Id="L${numbers}" versao="2.02"><NumeroLote>${numbers}</NumeroLote>` +
  `<CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal>123456</InscricaoMunicipal>` +
  `<QuantidadeRps>1</QuantidadeRps><ListaRps>${signedRps}</ListaRps></LoteRps></${root}>`;
const codes = (xml: string) => [...xml.matchAll(/<Codigo>(\w+)<\/Codigo>/g)].map((m) => m[1]);

async function call(body: string) {
  const answer = await http.send(null, 'POST', `${env.url}/municipal/abrasf-futurize/producaorestrita`, {
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`,
  });
  if (answer.kind !== 'response') throw new Error(answer.reason);
  const output = /<outputXML>([\s\S]*)<\/outputXML>/.exec(answer.body)?.[1] ?? '';
  const inner = output
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&amp;', '&');
  return { status: answer.status, body: answer.body, inner };
}

describe('the ABRASF sandbox, Futurize profile', () => {
  it('issues GerarNfse without a client certificate; the NFS-e carries CTribNac/cNBS and validates', async () => {
    const res = await call(op('GerarNfse', `<GerarNfseEnvio xmlns="${ABRASF}">${rps()}</GerarNfseEnvio>`));
    const comp = /<CompNfse[\s\S]*<\/CompNfse>/.exec(res.inner)![0];
    expect(comp).toContain('<CTribNac>010101</CTribNac><cNBS>115021000</cNBS></Servico>');
    expect(validateXml('abrasf202Futurize', comp)).toEqual({ ok: true });
  });

  it('refuses an ItemListaServico (E160: the reform-era Servico has none)', async () => {
    const withItem = rps((x) =>
      x.replace('<Discriminacao>', '<ItemListaServico>01.01</ItemListaServico><Discriminacao>'),
    );
    const res = await call(op('GerarNfse', `<GerarNfseEnvio xmlns="${ABRASF}">${withItem}</GerarNfseEnvio>`));
    expect(codes(res.inner)).toContain('E160');
  });

  it('takes RecepcionarLoteRpsSincrono with EnviarLoteRpsEnvio (unsigned lote), faults the official root', async () => {
    const ok = await call(op('RecepcionarLoteRpsSincrono', lote('EnviarLoteRpsEnvio', rps())));
    expect(ok.inner).toMatch(/^<EnviarLoteRpsResposta[\s\S]*<ListaNfse><CompNfse/);
    const official = await call(op('RecepcionarLoteRpsSincrono', lote('EnviarLoteRpsSincronoEnvio', rps())));
    expect(official.status).toBe(500);
    expect(official.body).toContain('Método não disponível');
  });

  it('the engine sends escaped strings, no ItemListaServico, and refuses an invoice without a final NBS', () => {
    const xml = rps();
    expect(xml).not.toContain('ItemListaServico');
    type Built = { request(input: PreparedDocument, context: SendContext): OperationRequest };
    const request = (family.operations.emit as Built).request({ id: 'x', xml } as PreparedDocument, {
      endpoints: { url: () => 'https://x.nfse-futurize.com.br/webservice/homo' },
      ambiente: 2,
      municipality: '1502004',
      certificate: env.certificate,
    });
    expect(request.headers.soapaction).toBe('"http://nfse.abrasf.org.br/GerarNfse"');
    expect(request.body).toContain('<nfseDadosMsg>&lt;GerarNfseEnvio');
    expect(family.check(project, normalized(project))).toEqual([
      { field: 'servico.nbs', message: 'Futurize requires cNBS (the final NBS code)' },
    ]);
    expect(family.auth).toBe('signature');
  });
});
