import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { GISS_CONFIG } from '../../src/engines/abrasf-v2/providers/giss.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import type { Connection, PreparedDocument } from '../../src/engines/types.ts';
import { GISS_PROFILE } from '../../src/sandbox/abrasf-v2/giss.ts';
import { signXml } from '../../src/xml/sign.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { normalized, startAbrasfSandbox } from '../conformance/abrasf-env.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';

/**
 * GISS on the generic ABRASF sandbox: split namespaces on the wire (request and answer roots in their
 * `giss.com.br/<message>-v2_04.xsd`, types in tipos, the GISS cabecalho), Aliquota as a fraction (E165 for a
 * percentage, at processing), the asynchronous lote polled through "still processing" (Situacao 2, E178) to
 * issued (4), signed queries (E172 unsigned), A01 for GerarNfse, E182 without a client certificate.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2704302',
  regimeTributario: '3',
  aliquotaSimples: 5,
  inscricaoMunicipal: '123456',
});
const GISS = 'http://www.giss.com.br';
const TIPOS = `${GISS}/tipos-v2_04.xsd`;
const family = defineAbrasfProvider(GISS_CONFIG);
let numbers = 700_000 + (Date.now() % 100_000);

type Env = Awaited<ReturnType<typeof startAbrasfSandbox>>;
let env: Env;
let http: GovernmentHttpClient;
const sent: { headers: Record<string, string>; body: string }[] = [];

beforeAll(async () => {
  env = await startAbrasfSandbox(GISS_PROFILE, project, 400);
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, env.caPem);
});
afterAll(async () => {
  await http?.close();
  await env?.close();
});

const recording = () =>
  ({
    send: (certificate, method, url, request) => {
      sent.push({ headers: request?.headers ?? {}, body: String(request?.body ?? '') });
      return http.send(certificate, method, url, request);
    },
  }) as Pick<GovernmentHttpClient, 'send'> as GovernmentHttpClient;

const connection = (): Connection => ({ certificate: env.certificate, ambiente: 2, municipality: '2704302' });
const unescapeXml = (s: string) =>
  s.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&amp;', '&');
const dadosOf = (body: string) => unescapeXml(/<nfseDadosMsg>([\s\S]*)<\/nfseDadosMsg>/.exec(body)?.[1] ?? '');
const cabecOf = (body: string) => unescapeXml(/<nfseCabecMsg>([\s\S]*)<\/nfseCabecMsg>/.exec(body)?.[1] ?? '');
const codes = (xml: string) => [...xml.matchAll(/<Codigo>(\w+)<\/Codigo>/g)].map((m) => m[1]);

async function raw(op: string, dados: string, certificate = true): Promise<string> {
  const cabec = `<cabecalho xmlns="${GISS}/cabecalho-v2_04.xsd" versao="2.04"><versaoDados>2.04</versaoDados></cabecalho>`;
  const esc = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
  const answer = await http.send(
    certificate ? env.certificate : null,
    'POST',
    `${env.url}/municipal/abrasf-giss/producaorestrita`,
    {
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"http://nfse.abrasf.org.br/${op}"` },
      body:
        `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>` +
        `<ws:${op}Request xmlns:ws="http://nfse.abrasf.org.br"><nfseCabecMsg>${esc(cabec)}</nfseCabecMsg>` +
        `<nfseDadosMsg><![CDATA[${dados}]]></nfseDadosMsg></ws:${op}Request></soap:Body></soap:Envelope>`,
    },
  );
  if (answer.kind !== 'response') throw new Error(answer.reason);
  return unescapeXml(/<outputXML>([\s\S]*)<\/outputXML>/.exec(answer.body)?.[1] ?? answer.body);
}

function prepare(invoice = normalized(project)): PreparedDocument {
  const engine = createEngine(family, {
    http,
    endpoints: env.endpoints,
    signatureAlgorithm: 'rsa-sha1',
    validateBeforeSend: true,
  });
  const prepared = engine.prepare({
    project,
    invoice,
    serie: project.serieNfse,
    number: ++numbers,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  });
  if (prepared.kind !== 'ok') throw new Error(JSON.stringify(prepared));
  return prepared.value;
}

describe('the generic ABRASF sandbox with the GISS profile', () => {
  it('polls a lote through "still processing" to issued, every message in the GISS namespaces', async () => {
    const engine = createEngine(family, {
      http: recording(),
      endpoints: env.endpoints,
      signatureAlgorithm: 'rsa-sha1',
      validateBeforeSend: true,
    });
    sent.length = 0;
    const document = prepare();
    const first = await engine.issue(document, connection());
    expect(first.kind).toBe('pending');
    const protocol = first.kind === 'pending' ? first.protocol : '';
    const still = await engine.poll(protocol, document, connection());
    expect(still.kind).toBe('pending');
    let polled = still;
    for (let i = 0; i < 30 && polled.kind === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      polled = await engine.poll(protocol, document, connection());
    }
    expect(polled.kind, JSON.stringify(polled)).toBe('ok');
    const [lote, poll] = sent;
    expect(lote!.headers.soapaction).toBe('"http://nfse.abrasf.org.br/RecepcionarLoteRps"');
    expect(cabecOf(lote!.body)).toContain(`xmlns="${GISS}/cabecalho-v2_04.xsd"`);
    const loteXml = dadosOf(lote!.body);
    expect(loteXml).toMatch(
      new RegExp(`^<EnviarLoteRpsEnvio xmlns="${GISS}/enviar-lote-rps-envio-v2_04.xsd"><LoteRps `),
    );
    expect(loteXml).toContain(`<NumeroLote xmlns="${TIPOS}">`);
    expect(loteXml).toContain('<Aliquota>0.0200</Aliquota>'); // 2 % as a fraction
    expect(validateXml('abrasf204Giss', loteXml)).toEqual({ ok: true });
    const pollXml = dadosOf(poll!.body);
    expect(pollXml).toContain(`<ConsultarLoteRpsEnvio xmlns="${GISS}/consultar-lote-rps-envio-v2_04.xsd">`);
    expect(pollXml).toMatch(/<Reference URI="">/);
    expect(validateXml('abrasf204Giss', pollXml)).toEqual({ ok: true });
    // the answer in consultar-lote-rps-resposta: Situacao 4, ListaNfse (local), CompNfse in tipos
    const answer = await raw('ConsultarLoteRps', pollXml);
    expect(answer).toMatch(
      new RegExp(
        `^<ConsultarLoteRpsResposta xmlns="${GISS}/consultar-lote-rps-resposta-v2_04.xsd"><Situacao>4</Situacao><ListaNfse><CompNfse xmlns="${TIPOS}">`,
      ),
    );
    // a signed poll whose protocol was changed after signing: E172
    expect(codes(await raw('ConsultarLoteRps', pollXml.replace(/<Protocolo>\d+/, '<Protocolo>1')))).toEqual(['E172']);
  });

  it('refuses GerarNfse with A01, an unsigned query with E172, and a call without client certificate with E182', async () => {
    const document = prepare();
    // GerarNfse as the XSD wants it (Rps in gerar-nfse-envio, the declaration in tipos): still A01
    const rps = document.xml.replace(
      `<Rps xmlns="${TIPOS}"><InfDeclaracaoPrestacaoServico `,
      `<Rps><InfDeclaracaoPrestacaoServico xmlns="${TIPOS}" `,
    );
    const gerar = `<GerarNfseEnvio xmlns="${GISS}/gerar-nfse-envio-v2_04.xsd">${rps}</GerarNfseEnvio>`;
    expect(validateXml('abrasf204Giss', gerar)).toEqual({ ok: true });
    expect(codes(await raw('GerarNfse', gerar))).toContain('A01');
    const query =
      `<ConsultarLoteRpsEnvio xmlns="${GISS}/consultar-lote-rps-envio-v2_04.xsd"><Prestador><CpfCnpj xmlns="${TIPOS}">` +
      `<Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal xmlns="${TIPOS}">123456</InscricaoMunicipal></Prestador>` +
      '<Protocolo>123</Protocolo></ConsultarLoteRpsEnvio>';
    expect(validateXml('abrasf204Giss', query)).toEqual({ ok: true });
    expect(codes(await raw('ConsultarLoteRps', query))).toEqual(['E172']);
    const key = { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem };
    const signed = signXml(query, { key });
    expect(codes(await raw('ConsultarLoteRps', signed))).toEqual(['E86']);
    expect(codes(await raw('ConsultarLoteRps', signed, false))).toEqual(['E182']);
    // the ABRASF namespace is not GISS's (E160)
    const abrasf = query.replace(`${GISS}/consultar-lote-rps-envio-v2_04.xsd`, 'http://www.abrasf.org.br/nfse.xsd');
    expect(codes(await raw('ConsultarLoteRps', signXml(abrasf, { key })))).toContain('E160');
  });

  it('writes the reform group (Valores/IBSCBS, CodigoNbs) of an IBS/CBS framing, valid for the GISS XSD', () => {
    const invoice = normalized(project, {
      valores: {
        total: 1500.5,
        aliquotaIss: 2,
        ibscbs: { nbs: '115021000', cIndOp: '100301', cst: '000', cClassTrib: '000001' },
      },
    });
    const document = prepare(invoice);
    expect(document.xml).toContain('<CodigoNbs>115021000</CodigoNbs>');
    expect(document.xml).toMatch(
      /<Aliquota>0\.0200<\/Aliquota><IBSCBS><finNFSe>0<\/finNFSe><indFinal>0<\/indFinal><cIndOp>100301<\/cIndOp>.*<gIBSCBS><CST>000<\/CST><cClassTrib>000001<\/cClassTrib><\/gIBSCBS><\/trib><cLocalidadeIncid>2704302<\/cLocalidadeIncid><pRedutor>0\.00<\/pRedutor><\/valores><\/IBSCBS><\/Valores>/,
    );
  });

  it('refuses at processing (Situacao 3, E165) an Aliquota sent as a percentage', async () => {
    const percentage = defineAbrasfProvider({
      ...GISS_CONFIG,
      formats: { ...GISS_CONFIG.formats, aliquota: 'percentage' },
    });
    const engine = createEngine(percentage, {
      http,
      endpoints: env.endpoints,
      signatureAlgorithm: 'rsa-sha1',
      validateBeforeSend: true,
    });
    const document = engine.prepare({
      project,
      invoice: normalized(project),
      serie: project.serieNfse,
      number: ++numbers,
      issuedAt: new Date(Date.now() - 60_000),
      certificate: env.certificate,
    });
    if (document.kind !== 'ok') throw new Error(JSON.stringify(document));
    expect(document.value.xml).toContain('<Aliquota>2.00</Aliquota>');
    const first = await engine.issue(document.value, connection());
    expect(first.kind).toBe('pending');
    const protocol = first.kind === 'pending' ? first.protocol : '';
    let polled = await engine.poll(protocol, document.value, connection());
    for (let i = 0; i < 30 && polled.kind === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      polled = await engine.poll(protocol, document.value, connection());
    }
    expect(polled.kind).toBe('rejected');
    expect(polled.kind === 'rejected' ? polled.errorCode : null).toBe('E165');
  });
});
