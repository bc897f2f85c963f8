import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { MEGASOFT_CONFIG } from '../../src/engines/abrasf-v2/providers/megasoft.ts';
import type { OperationRequest, SendContext } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import type { PreparedDocument } from '../../src/engines/types.ts';
import { MEGASOFT_NS, MEGASOFT_PROFILE } from '../../src/sandbox/abrasf-v2/megasoft.ts';
import { signXml } from '../../src/xml/sign.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { normalized, startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * The ABRASF sandbox in its MegaSoft profile on raw requests: the WSDL's two operations only, GerarNfse in CDATA and
 * ConsultarNfsePorRps escaped (as ACBr sends them), the MegaSoft XSD (E160 for a Serie in IdentificacaoRps), the RPS
 * signature (E174), the client certificate (E182), and NFS-e valid against nfse_v01.xsd.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '1600709',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const family = defineAbrasfProvider(MEGASOFT_CONFIG);
let numbers = 700_000 + (Date.now() % 100_000);
type Env = Awaited<ReturnType<typeof startAbrasfSandbox>>;
let env: Env;
let http: GovernmentHttpClient;

beforeAll(async () => {
  env = await startAbrasfSandbox(MEGASOFT_PROFILE, project);
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
});
afterAll(async () => {
  await http?.close();
  await env?.close();
});

function rps(edit: (xml: string) => string = (x) => x, sign = true): { numero: number; xml: string } {
  const numero = ++numbers;
  const built = family.declaration.build({
    project,
    invoice: normalized(project),
    serie: '1',
    number: numero,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  });
  const key = { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem };
  const xml = edit(built.xml);
  return { numero, xml: sign ? signXml(xml, { elementName: 'InfDeclaracaoPrestacaoServico', key }) : xml };
}

const escapeText = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const CABEC = `<cabecalho versao="1.00" xmlns="${MEGASOFT_NS}"><versaoDados>1.00</versaoDados></cabecalho>`;
const op = (name: string, dados: string, cdata: boolean) =>
  `<ws:${name}Request xmlns:ws="http://ws.megasoftarrecadanet.com.br">` +
  `<nfseCabecMsg>${cdata ? `<![CDATA[${CABEC}]]>` : escapeText(CABEC)}</nfseCabecMsg>` +
  `<nfseDadosMsg>${cdata ? `<![CDATA[${dados}]]>` : escapeText(dados)}</nfseDadosMsg></ws:${name}Request>`;
const gerar = (xml: string) => op('GerarNfse', `<GerarNfseEnvio xmlns="${MEGASOFT_NS}">${xml}</GerarNfseEnvio>`, true);
const codes = (xml: string) => [...xml.matchAll(/<Codigo>(\w+)<\/Codigo>/g)].map((m) => m[1]);

async function call(body: string, certificate = true) {
  const answer = await http.send(
    certificate ? env.certificate : null,
    'POST',
    `${env.url}/municipal/abrasf-megasoft/producaorestrita`,
    {
      headers: { 'content-type': 'text/xml; charset=utf-8' },
      body: `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`,
    },
  );
  if (answer.kind !== 'response') throw new Error(answer.reason);
  const output = /<outputXML>([\s\S]*)<\/outputXML>/.exec(answer.body)?.[1] ?? '';
  const inner = output
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&amp;', '&');
  return { status: answer.status, body: answer.body, inner };
}

describe('the ABRASF sandbox, MegaSoft profile', () => {
  it('issues GerarNfse (CDATA) with an NFS-e valid against nfse_v01.xsd, found again by RPS number (escaped)', async () => {
    const sent = rps();
    const res = await call(gerar(sent.xml));
    expect(res.inner).toContain(`<GerarNfseResposta xmlns="${MEGASOFT_NS}">`);
    const comp = /<CompNfse[\s\S]*<\/CompNfse>/.exec(res.inner)![0];
    expect(validateXml('abrasf200MegaSoft', comp)).toEqual({ ok: true });
    const numero = /<Numero>(\d+)<\/Numero>/.exec(comp)![1];
    const query =
      `<ConsultarNfseRpsEnvio xmlns="${MEGASOFT_NS}"><IdentificacaoRps><Numero>${sent.numero}</Numero></IdentificacaoRps>` +
      `<Prestador><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal>123456</InscricaoMunicipal></Prestador></ConsultarNfseRpsEnvio>`;
    const found = await call(op('ConsultarNfsePorRps', query, false));
    expect(found.inner).toContain(`<Numero>${numero}</Numero>`);
    expect(validateXml('abrasf200MegaSoft', found.inner)).toEqual({ ok: true });
  });

  it('refuses a Serie in IdentificacaoRps (E160), an unsigned RPS (E174), a call without certificate (E182)', async () => {
    const withSerie = rps((x) =>
      x.replace('</Numero></IdentificacaoRps>', '</Numero><Serie>1</Serie></IdentificacaoRps>'),
    );
    expect(codes((await call(gerar(withSerie.xml))).inner)).toContain('E160');
    expect(codes((await call(gerar(rps(undefined, false).xml))).inner)).toEqual(['E174']);
    expect(codes((await call(gerar(rps().xml), false)).inner)).toEqual(['E182']);
  });

  it('answers a SOAP Client fault for operations its WSDL does not declare (lote, cancellation)', async () => {
    for (const name of ['RecepcionarLoteRps', 'CancelarNfse']) {
      const res = await call(op(name, '<x/>', false));
      expect(res.status).toBe(500);
      expect(res.body).toContain('faultcode');
    }
  });

  it('the engine sends GerarNfse in CDATA and ConsultarNfsePorRps escaped, with the 1.00 cabecalho and SOAPAction', () => {
    const sent = rps();
    const context = {
      endpoints: { url: () => 'https://x.megasoftarrecadanet.com.br/x/ws/nfseSOAP' },
      ambiente: 2 as const,
      municipality: '1600709',
      certificate: env.certificate,
    };
    const document = { id: 'x', xml: sent.xml } as PreparedDocument;
    type Built = { request(input: PreparedDocument, context: SendContext): OperationRequest };
    const emit = (family.operations.emit as Built).request(document, context);
    expect(emit.headers.soapaction).toBe('"http://ws.megasoftarrecadanet.com.br/GerarNfse"');
    expect(emit.body).toContain('<nfseCabecMsg><![CDATA[<cabecalho versao="1.00"');
    expect(emit.body).toContain(`<nfseDadosMsg><![CDATA[<GerarNfseEnvio xmlns="${MEGASOFT_NS}">`);
    const query = (family.operations.query as Built).request(document, context);
    expect(query.body).toContain('<nfseDadosMsg>&lt;ConsultarNfseRpsEnvio');
    expect(query.body).toContain(
      `&lt;IdentificacaoRps&gt;&lt;Numero&gt;${sent.numero}&lt;/Numero&gt;&lt;/IdentificacaoRps&gt;`,
    );
    expect(family.operations.cancel).toBeUndefined();
  });
});
