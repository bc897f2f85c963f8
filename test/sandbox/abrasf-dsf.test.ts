import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { DSF_CONFIG } from '../../src/engines/abrasf-v2/providers/dsf.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { DSF_PROFILE } from '../../src/sandbox/abrasf-v2/dsf.ts';
import { signXml } from '../../src/xml/sign.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { normalized, startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * The DSF profile of the generic ABRASF sandbox on raw requests: `<nfse:<Op>>` with the message inline in no
 * namespace (the ABRASF namespace is refused by DSF's XSD: E160), answers inline in `<Op>Response` (the range query
 * is `ConsultarNfseFaixa`), every query signed by the prestador at its root (E172 / E157), a 9-digit CNAE.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '1501402',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '1234567',
  cnae: '6201501',
});
const family = defineAbrasfProvider(DSF_CONFIG);
const overrides = { servico: { descricao: 'Software', codigo: '010101', cnae: '620150100' } };
let numbers = 800_000 + (Date.now() % 100_000);

type Env = Awaited<ReturnType<typeof startAbrasfSandbox>>;
let env: Env;
let http: GovernmentHttpClient;

beforeAll(async () => {
  env = await startAbrasfSandbox(DSF_PROFILE, project);
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
});
afterAll(async () => {
  await http?.close();
  await env?.close();
});

const key = () => ({ privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem });

function rps(number = ++numbers) {
  const built = family.declaration.build({
    project,
    invoice: normalized(project, overrides),
    serie: '1',
    number,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  });
  return signXml(built.xml, { elementName: 'InfDeclaracaoPrestacaoServico', key: key() });
}

const op = (name: string, message: string) =>
  `<nfse:${name} xmlns:nfse="http://nfse.abrasf.org.br">${message}</nfse:${name}>`;

async function call(body: string): Promise<string> {
  const answer = await http.send(env.certificate, 'POST', `${env.url}/municipal/abrasf-dsf/producaorestrita`, {
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
    body: `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`,
  });
  if (answer.kind !== 'response') throw new Error(answer.reason);
  return answer.body;
}

const codes = (xml: string) => [...xml.matchAll(/<Codigo>(\w+)<\/Codigo>/g)].map((m) => m[1]);
const prestador = `<Prestador><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal>1234567</InscricaoMunicipal></Prestador>`;

describe('the generic ABRASF sandbox (DSF profile)', () => {
  it('issues a GerarNfse inline in no namespace, answering inline an NFS-e its XSD accepts', async () => {
    const body = await call(op('GerarNfse', `<GerarNfseEnvio>${rps()}</GerarNfseEnvio>`));
    expect(body).toMatch(/<ns2:GerarNfseResponse[^>]*><GerarNfseResposta><ListaNfse><CompNfse><Nfse versao/);
    const comp = /<CompNfse>[\s\S]*<\/CompNfse>/.exec(body)![0];
    expect(comp).toContain('<CodigoCnae>620150100</CodigoCnae>');
    const answer = /<GerarNfseResposta>[\s\S]*<\/GerarNfseResposta>/.exec(body)![0];
    expect(validateXml('abrasf203Dsf', answer)).toEqual({ ok: true });
  });

  it('refuses a message in the ABRASF namespace (E160)', async () => {
    const namespaced = `<GerarNfseEnvio xmlns="http://www.abrasf.org.br/nfse.xsd">${rps()}</GerarNfseEnvio>`;
    expect(codes(await call(op('GerarNfse', namespaced)))).toContain('E160');
  });

  it('answers ConsultarNfseFaixa and ConsultarLoteRps only when the prestador signed them (E172, E157)', async () => {
    await call(op('GerarNfse', `<GerarNfseEnvio>${rps()}</GerarNfseEnvio>`));
    const faixa = `<ConsultarNfseFaixaEnvio>${prestador}<Faixa><NumeroNfseInicial>1</NumeroNfseInicial><NumeroNfseFinal>1</NumeroNfseFinal></Faixa><Pagina>1</Pagina></ConsultarNfseFaixaEnvio>`;
    expect(codes(await call(op('ConsultarNfseFaixa', faixa)))).toEqual(['E172']);
    const signed = await call(op('ConsultarNfseFaixa', signXml(faixa, { key: key() })));
    expect(signed).toMatch(/<ns2:ConsultarNfseFaixaResponse[^>]*><ConsultarNfseFaixaResposta><ListaNfse><CompNfse>/);
    const stranger = faixa.replace(`<Cnpj>${project.cnpj}</Cnpj>`, '<Cnpj>45723174000110</Cnpj>');
    expect(codes(await call(op('ConsultarNfseFaixa', signXml(stranger, { key: key() }))))).toEqual(['E157']);
    const lote = `<ConsultarLoteRpsEnvio>${prestador}<Protocolo>1</Protocolo></ConsultarLoteRpsEnvio>`;
    expect(codes(await call(op('ConsultarLoteRps', lote)))).toEqual(['E172']);
    expect(codes(await call(op('ConsultarLoteRps', signXml(lote, { key: key() }))))).toEqual(['E86']);
  });
});
