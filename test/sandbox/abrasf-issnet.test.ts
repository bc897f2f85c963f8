import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { ISSNET_CONFIG } from '../../src/engines/abrasf-v2/providers/issnet.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { ISSNET_PROFILE } from '../../src/sandbox/abrasf-v2/issnet.ts';
import { signXml } from '../../src/xml/sign.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { normalized, startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * The ISSNet profile of the generic ABRASF sandbox on raw requests: `<Op>{nfseCabecMsg, nfseDadosMsg}` with raw child
 * XML (ACBr, OpenAC) or escaped strings (a DF integrator), `<Op>Result` answers, `URI=""` and `#Id` signatures, the
 * `Pedido`-wrapped queries signed by the prestador (E172 / E157), the ISSNet XSD (E160).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '5300108',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '0734567800',
  cnae: '6201501',
});
const ABRASF = 'http://www.abrasf.org.br/nfse.xsd';
const family = defineAbrasfProvider(ISSNET_CONFIG);
const overrides = { servico: { descricao: 'Software', codigo: '010101', codigoTributacaoMunicipal: '001' } };
let numbers = 700_000 + (Date.now() % 100_000);

type Env = Awaited<ReturnType<typeof startAbrasfSandbox>>;
let env: Env;
let http: GovernmentHttpClient;

beforeAll(async () => {
  env = await startAbrasfSandbox(ISSNET_PROFILE, project);
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
});
afterAll(async () => {
  await http?.close();
  await env?.close();
});

const key = () => ({ privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem });

/** an RPS signed as the engine signs it (URI="") or with `#Id` */
function rps(reference: 'document' | 'id' = 'document', number = ++numbers) {
  const built = family.declaration.build({
    project,
    invoice: normalized(project, overrides),
    serie: '1',
    number,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  });
  return signXml(built.xml, {
    ...(reference === 'id' ? { elementName: 'InfDeclaracaoPrestacaoServico' } : {}),
    key: key(),
  });
}

const escapeText = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const CABEC = `<cabecalho versao="2.04" xmlns="${ABRASF}"><versaoDados>2.04</versaoDados></cabecalho>`;
const op = (name: string, dados: string, encoding: 'raw' | 'escaped' = 'raw', wrapper = name) => {
  const enc = (s: string) => (encoding === 'raw' ? s : escapeText(s));
  return `<nfse:${wrapper} xmlns:nfse="http://nfse.abrasf.org.br"><nfseCabecMsg>${enc(CABEC)}</nfseCabecMsg><nfseDadosMsg>${enc(dados)}</nfseDadosMsg></nfse:${wrapper}>`;
};

async function call(body: string): Promise<{ status: number; body: string; inner: string }> {
  const answer = await http.send(env.certificate, 'POST', `${env.url}/municipal/abrasf-issnet/producaorestrita`, {
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`,
  });
  if (answer.kind !== 'response') throw new Error(answer.reason);
  const result = /<(\w+)Result>([\s\S]*)<\/\1Result>/.exec(answer.body)?.[2];
  const inner = result
    ? result.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&amp;', '&')
    : answer.body;
  return { status: answer.status, body: answer.body, inner };
}

const codes = (xml: string) => [...xml.matchAll(/<Codigo>(\w+)<\/Codigo>/g)].map((m) => m[1]);
const gerar = (signed: string) => `<GerarNfseEnvio xmlns="${ABRASF}">${signed}</GerarNfseEnvio>`;
const porRps = (numero: number) =>
  `<ConsultarNfseRpsEnvio xmlns="${ABRASF}"><Pedido><IdentificacaoRps><Numero>${numero}</Numero><Serie>1</Serie><Tipo>1</Tipo></IdentificacaoRps>` +
  `<Prestador><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal>0734567800</InscricaoMunicipal></Prestador></Pedido></ConsultarNfseRpsEnvio>`;

describe('the generic ABRASF sandbox (ISSNet profile)', () => {
  it('issues a GerarNfse sent as raw XML (URI="") and as escaped strings (#Id), answering in <Op>Result', async () => {
    const raw = await call(op('GerarNfse', gerar(rps('document'))));
    expect(raw.body).toContain('<GerarNfseResult>');
    expect(raw.inner).toMatch(/<CompNfse[^>]*><Nfse[^>]*><InfNfse[^>]*><Numero>\d+<\/Numero>/);
    // 2.04: PrestadorServico without IdentificacaoPrestador (the sandbox holds no taxpayer register, so its
    // Endereco carries the municipality only, which ISSNet's XSD, every address field required, would refuse)
    expect(raw.inner).toMatch(/<PrestadorServico><RazaoSocial>/);
    const escaped = await call(op('GerarNfse', gerar(rps('id')), 'escaped'));
    expect(escaped.inner).toMatch(/<CompNfse/);
  });

  it('refuses the official <Op>Request wrapper, a tampered URI="" signature (E324) and what the ISSNet XSD refuses (E160)', async () => {
    const request = await call(op('GerarNfse', gerar(rps()), 'raw', 'GerarNfseRequest'));
    expect(request.body).toContain('faultcode');
    const tampered = rps().replace('<ValorServicos>1500.50</ValorServicos>', '<ValorServicos>1.00</ValorServicos>');
    expect(codes((await call(op('GerarNfse', gerar(tampered)))).inner)).toEqual(['E324']);
    const invalid = rps().replace(/<ItemListaServico>[^<]+</, '<ItemListaServico>01.01.01<');
    expect(codes((await call(op('GerarNfse', gerar(invalid)))).inner)).toContain('E160');
  });

  it('answers a query by RPS wrapped in Pedido only when the prestador signed it (E172 unsigned, E157 a stranger)', async () => {
    const number = ++numbers;
    await call(op('GerarNfse', gerar(rps('document', number))));
    const unsigned = await call(op('ConsultarNfsePorRps', porRps(number)));
    expect(codes(unsigned.inner)).toEqual(['E172']);
    const signed = await call(op('ConsultarNfsePorRps', signXml(porRps(number), { key: key() })));
    expect(signed.inner).toMatch(/<ConsultarNfseRpsResposta[^>]*><CompNfse/);
    const stranger = porRps(number).replace(`<Cnpj>${project.cnpj}</Cnpj>`, '<Cnpj>45723174000110</Cnpj>');
    expect(codes((await call(op('ConsultarNfsePorRps', signXml(stranger, { key: key() })))).inner)).toEqual(['E157']);
  });

  it('sends what the ISSNet XSD accepts: the engine signs with URI="" and wraps its queries in a signed Pedido', () => {
    const signed = rps();
    expect(signed).toContain('URI=""');
    expect(validateXml('abrasf204Issnet', gerar(signed))).toEqual({ ok: true });
    expect(validateXml('abrasf204Issnet', signXml(porRps(1), { key: key() }))).toEqual({ ok: true });
  });
});
