import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fiorilliAbrasfFamily, webissFamily } from '../../src/engines/abrasf-v2/index.ts';
import type { FamilyDefinition } from '../../src/engines/kit/family.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { FIORILLI_PROFILE, WEBISS_PROFILE } from '../../src/sandbox/abrasf-v2/index.ts';
import { signXml } from '../../src/xml/sign.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from '../conformance/abrasf-env.ts';

/**
 * The generic ABRASF 2.0x sandbox on raw requests: the encodings real clients send (escaped, CDATA, SOAP 1.2), the
 * XSD (E160), signatures (E174), credentials (Fiorilli username/password E179; WebISS client certificate E182), and
 * the asynchronous lote state machine with a hold: Situacao 2 + E178 while it waits, 4 with the NFS-e, 3 with the
 * lote's messages (E2), 1 + E86 for an unknown protocol.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2800308',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const ABRASF = 'http://www.abrasf.org.br/nfse.xsd';
let numbers = 500_000 + (Date.now() % 100_000);

type Env = Awaited<ReturnType<typeof startAbrasfSandbox>>;
let webiss: Env;
let fiorilli: Env;
let http: GovernmentHttpClient;
let httpFiorilli: GovernmentHttpClient;

beforeAll(async () => {
  webiss = await startAbrasfSandbox(WEBISS_PROFILE, project, 2_000);
  fiorilli = await startAbrasfSandbox(FIORILLI_PROFILE, { ...project, codigoMunicipio: '1100023' });
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, webiss.caPem);
  httpFiorilli = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, fiorilli.caPem);
});
afterAll(async () => {
  await http?.close();
  await httpFiorilli?.close();
  await webiss?.close();
  await fiorilli?.close();
});

function signedRps(family: FamilyDefinition, env: Env, edit: (xml: string) => string = (x) => x, sign = true) {
  const built = family.declaration.build({
    project,
    invoice: normalized(project),
    serie: '1',
    number: ++numbers,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  });
  const xml = edit(built.xml);
  const key = { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem };
  return sign ? signXml(xml, { elementName: 'InfDeclaracaoPrestacaoServico', key }) : xml;
}

const escapeText = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
const CABEC = `<cabecalho versao="2.02" xmlns="${ABRASF}"><versaoDados>2.02</versaoDados></cabecalho>`;

async function call(
  env: Env,
  body: string,
  options: { soap12?: boolean; certificate?: boolean } = {},
): Promise<{ status: number; body: string; inner: string }> {
  const ns = options.soap12 ? 'http://www.w3.org/2003/05/soap-envelope' : 'http://schemas.xmlsoap.org/soap/envelope/';
  const answer = await (env === webiss ? http : httpFiorilli).send(
    options.certificate === false ? null : env.certificate,
    'POST',
    `${env.url}/municipal/${env === webiss ? 'abrasf-webiss' : 'abrasf-fiorilli'}/producaorestrita`,
    {
      headers: { 'content-type': options.soap12 ? 'application/soap+xml; charset=utf-8' : 'text/xml; charset=utf-8' },
      body: `<?xml version="1.0"?><soap:Envelope xmlns:soap="${ns}"><soap:Body>${body}</soap:Body></soap:Envelope>`,
    },
  );
  if (answer.kind !== 'response') throw new Error(answer.reason);
  const output = /<outputXML>([\s\S]*)<\/outputXML>/.exec(answer.body)?.[1];
  const inner = output
    ? output.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&amp;', '&')
    : answer.body;
  return { status: answer.status, body: answer.body, inner };
}

const webissOp = (op: string, dados: string, encoding: 'escaped' | 'cdata' = 'escaped') =>
  `<ws:${op}Request xmlns:ws="http://nfse.abrasf.org.br"><nfseCabecMsg>${encoding === 'cdata' ? `<![CDATA[${CABEC}]]>` : escapeText(CABEC)}</nfseCabecMsg>` +
  `<nfseDadosMsg>${encoding === 'cdata' ? `<![CDATA[${dados}]]>` : escapeText(dados)}</nfseDadosMsg></ws:${op}Request>`;

const codes = (xml: string) => [...xml.matchAll(/<Codigo>(\w+)<\/Codigo>/g)].map((m) => m[1]);

describe('the generic ABRASF 2.0x sandbox (WebISS profile)', () => {
  it('issues a GerarNfse sent as CDATA over SOAP 1.2, with a number and a CodigoVerificacao', async () => {
    const res = await call(
      webiss,
      webissOp(
        'GerarNfse',
        `<GerarNfseEnvio xmlns="${ABRASF}">${signedRps(webissFamily, webiss)}</GerarNfseEnvio>`,
        'cdata',
      ),
      {
        soap12: true,
      },
    );
    expect(res.status).toBe(200);
    expect(res.body).toContain('http://www.w3.org/2003/05/soap-envelope');
    const comp = /<CompNfse[\s\S]*<\/CompNfse>/.exec(res.inner)![0];
    expect(validateXml('abrasf202', comp)).toEqual({ ok: true });
    expect(res.inner).toMatch(
      /<CompNfse[^>]*><Nfse[^>]*><InfNfse[^>]*><Numero>\d+<\/Numero><CodigoVerificacao>\w{9}<\/CodigoVerificacao>/,
    );
  });

  it('refuses with E160 what its XSD refuses, with E174 an unsigned RPS, with E182 a call without client certificate', async () => {
    const invalid = signedRps(webissFamily, webiss, (x) =>
      x.replace('<IssRetido>2</IssRetido>', '<IssRetido>9</IssRetido>'),
    );
    const schema = await call(
      webiss,
      webissOp('GerarNfse', `<GerarNfseEnvio xmlns="${ABRASF}">${invalid}</GerarNfseEnvio>`),
    );
    expect(codes(schema.inner)).toContain('E160');
    const unsigned = signedRps(webissFamily, webiss, (x) => x, false);
    const noSignature = await call(
      webiss,
      webissOp('GerarNfse', `<GerarNfseEnvio xmlns="${ABRASF}">${unsigned}</GerarNfseEnvio>`),
    );
    expect(codes(noSignature.inner)).toEqual(['E174']);
    const anonymous = await call(
      webiss,
      webissOp('GerarNfse', `<GerarNfseEnvio xmlns="${ABRASF}">${signedRps(webissFamily, webiss)}</GerarNfseEnvio>`),
      {
        certificate: false,
      },
    );
    expect(codes(anonymous.inner)).toEqual(['E182']);
  });

  it('runs the asynchronous lote: Situacao 2 (E178) while it waits, then 4 with the NFS-e; 1 + E86 for an unknown protocol', async () => {
    const lote = (rps: string) => {
      const n = /<Numero>(\d+)<\/Numero>/.exec(rps)![1];
      const xml = `<EnviarLoteRpsEnvio xmlns="${ABRASF}"><LoteRps Id="L${n}" versao="2.02"><NumeroLote>${n}</NumeroLote><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj><InscricaoMunicipal>123456</InscricaoMunicipal><QuantidadeRps>1</QuantidadeRps><ListaRps>${rps}</ListaRps></LoteRps></EnviarLoteRpsEnvio>`;
      return signXml(xml, {
        elementName: 'LoteRps',
        key: { privateKey: webiss.certificate.privateKey, certificatePem: webiss.certificate.certPem },
      });
    };
    const consultar = (protocolo: string) =>
      call(
        webiss,
        webissOp(
          'ConsultarLoteRps',
          `<ConsultarLoteRpsEnvio xmlns="${ABRASF}"><Prestador><CpfCnpj><Cnpj>${project.cnpj}</Cnpj></CpfCnpj></Prestador><Protocolo>${protocolo}</Protocolo></ConsultarLoteRpsEnvio>`,
        ),
      );

    const sent = await call(webiss, webissOp('RecepcionarLoteRps', lote(signedRps(webissFamily, webiss))));
    const protocolo = /<Protocolo>(\d+)<\/Protocolo>/.exec(sent.inner)?.[1];
    expect(protocolo, sent.inner).toBeTruthy();
    const waiting = await consultar(protocolo!);
    expect(waiting.inner).toContain('<Situacao>2</Situacao>');
    expect(codes(waiting.inner)).toEqual(['E178']);
    const processed = async (protocol: string) => {
      // polled until the hold has passed, so a loaded machine does not make it flaky
      let answer = await consultar(protocol);
      for (let i = 0; i < 50 && answer.inner.includes('<Situacao>2</Situacao>'); i++) {
        await new Promise((r) => setTimeout(r, 200));
        answer = await consultar(protocol);
      }
      return answer;
    };
    const done = await processed(protocolo!);
    expect(done.inner).toContain('<Situacao>4</Situacao>');
    expect(done.inner).toMatch(/<CompNfse/);
    const unknown = await consultar('999');
    expect(unknown.inner).toContain('<Situacao>1</Situacao>');
    expect(codes(unknown.inner)).toEqual(['E86']);

    const late = signedRps(webissFamily, webiss, (x) =>
      x.replace(/<Competencia>[^<]+<\/Competencia>/, '<Competencia>2099-01-01</Competencia>'),
    );
    const refused = await call(webiss, webissOp('RecepcionarLoteRps', lote(late)));
    const second = /<Protocolo>(\d+)<\/Protocolo>/.exec(refused.inner)![1]!;
    const error = await processed(second);
    expect(error.inner).toContain('<Situacao>3</Situacao>');
    expect(error.inner).toContain('<ListaMensagemRetornoLote>');
    expect(codes(error.inner)).toEqual(['E2']);
  });
});

describe('the generic ABRASF 2.0x sandbox (Fiorilli profile)', () => {
  const gerar = (rps: string, credentials: string) =>
    `<ws:gerarNfse xmlns:ws="http://ws.issweb.fiorilli.com.br/"><GerarNfseEnvio xmlns="${ABRASF}">${rps}</GerarNfseEnvio>${credentials}</ws:gerarNfse>`;

  it('answers inline in gerarNfseResponse, and refuses missing credentials with E179', async () => {
    const ok = await call(
      fiorilli,
      gerar(signedRps(fiorilliAbrasfFamily, fiorilli), '<username>u</username><password>p</password>'),
      {
        certificate: false,
      },
    );
    expect(ok.body).toMatch(/<ns2:gerarNfseResponse[^>]*><GerarNfseResposta[^>]*><ListaNfse><CompNfse/);
    const missing = await call(fiorilli, gerar(signedRps(fiorilliAbrasfFamily, fiorilli), '<username>u</username>'), {
      certificate: false,
    });
    expect(codes(missing.body)).toEqual(['E179']);
  });

  it('refuses an unsigned RPS by its XSD (nfselib Fiorilli: the Signature is mandatory)', async () => {
    const unsigned = signedRps(fiorilliAbrasfFamily, fiorilli, (x) => x, false);
    const res = await call(fiorilli, gerar(unsigned, '<username>u</username><password>p</password>'), {
      certificate: false,
    });
    expect(codes(res.body)[0]).toBe('E160');
  });
});
