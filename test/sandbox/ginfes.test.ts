import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { type A1Certificate, readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest } from '../../src/domain/invoice-request.ts';
import { ginfesFamily } from '../../src/engines/ginfes/family.ts';
import { buildLote, buildQueryByRps, cabecalho, loteFacts } from '../../src/engines/ginfes/messages.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { escapeXmlText } from '../../src/xml/escape.ts';
import { signXml } from '../../src/xml/sign.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { createGinfesService } from '../../src/sandbox/ginfes/service.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SandboxServer, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { invoiceBody } from '../support/onboarding.ts';

/** The GINFES sandbox's own rules (rpc/literal, escaped answers, v03 XSDs, the lote state machine), hold 400 ms. */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3518800',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
  cnae: '6201501',
});
const SOAP = 'http://schemas.xmlsoap.org/soap/envelope/';
const HOMOLOGACAO = 'http://homologacao.ginfes.com.br';

let dir: string;
let server: SandboxServer;
let certificate: A1Certificate;
let agent: Agent;
let other: Agent;
let http: GovernmentHttpClient;
let number = 5000;
const base = () => `${server.url}/municipal/ginfes/producaorestrita`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sandbox-ginfes-'));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  const ca = createCertificateAuthority('AC Teste ICP-Brasil');
  const files = createA1Certificate({ cnpj: project.cnpj, name: 'P', password: 'x', issuer: ca });
  const read = readPkcs12(files.pfx, files.password);
  const stranger = createA1Certificate({ cnpj: '45723174000110', name: 'S', password: 'x', issuer: ca });
  const strangerRead = readPkcs12(stranger.pfx, stranger.password);
  if (!read.ok || !strangerRead.ok) throw new Error('certificates');
  certificate = read.value;
  const service = createGinfesService({
    signer: identity.signer,
    now: () => new Date(),
    logger: { info: () => {}, warn: () => {} },
    dataDir: dir,
    holdMs: 2_000,
  });
  server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [service],
  });
  agent = new Agent({ connect: { key: read.value.keyPem, cert: read.value.certPem, ca: identity.caPem } });
  other = new Agent({
    connect: { key: strangerRead.value.keyPem, cert: strangerRead.value.certPem, ca: identity.caPem },
  });
  http = new GovernmentHttpClient({ connectMs: 2_000, responseMs: 5_000 }, identity.caPem);
});
afterAll(async () => {
  await agent?.close();
  await other?.close();
  await http?.close();
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const invoice = () => {
  const checked = checkInvoiceRequest(invoiceBody() as InvoiceRequest, project);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.value;
};
const key = () => ({ privateKey: certificate.privateKey, certificatePem: certificate.certPem });
const lote = (edit: (xml: string) => string = (x) => x) => {
  const built = buildLote({
    project,
    invoice: invoice(),
    serie: '1',
    number: ++number,
    issuedAt: new Date(Date.now() - 60_000),
    certificate,
  });
  return signXml(edit(built.xml), { elementName: 'LoteRps', placement: 'root-end', key: key() });
};

function envelope(operation: string, args: string[], namespace = HOMOLOGACAO): string {
  const parts = args.map((a, i) => `<arg${i}>${escapeXmlText(a)}</arg${i}>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP}"><soap:Body><ns1:${operation} xmlns:ns1="${namespace}">${parts}</ns1:${operation}></soap:Body></soap:Envelope>`;
}

async function post(
  body: string,
  dispatcher: Agent = agent,
): Promise<{ status: number; text: string; answer: string }> {
  const res = await request(base(), {
    method: 'POST',
    body,
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
    dispatcher,
  });
  const text = await res.body.text();
  const escaped = /<return>([\s\S]*)<\/return>/.exec(text)?.[1] ?? '';
  const answer = escaped
    .replaceAll('&lt;', '<')
    .replaceAll('&gt;', '>')
    .replaceAll('&quot;', '"')
    .replaceAll('&amp;', '&');
  return { status: res.statusCode, text, answer };
}
const call = (operation: string, xml: string, dispatcher?: Agent) =>
  post(envelope(operation, [cabecalho(), xml]), dispatcher);
const codes = (answer: string) => [...answer.matchAll(/<tipos:Codigo>([^<]+)<\/tipos:Codigo>/g)].map((m) => m[1]);
const signedWhole = (xml: string) => signXml(xml, { key: key() });

describe('GINFES sandbox', () => {
  it('answers an escaped XML string in <return>, valid against the v03 answer schemas, and runs the lote states', async () => {
    const sent = lote();
    const received = await call('RecepcionarLoteRpsV3', sent);
    expect(received.status).toBe(200);
    expect(received.text).toContain('<return>&lt;ns3:EnviarLoteRpsResposta');
    expect(validateXml('ginfesV3Resposta', received.answer)).toEqual({ ok: true });
    const protocolo = /<ns3:Protocolo>([^<]+)</.exec(received.answer)?.[1] ?? '';
    expect(protocolo).not.toBe('');
    const facts = loteFacts(sent);
    const situacao = (p: string) =>
      signedWhole(
        `<ConsultarSituacaoLoteRpsEnvio xmlns="http://www.ginfes.com.br/servico_consultar_situacao_lote_rps_envio_v03.xsd" xmlns:tipos="http://www.ginfes.com.br/tipos_v03.xsd"><Prestador><tipos:Cnpj>${project.cnpj}</tipos:Cnpj><tipos:InscricaoMunicipal>123456</tipos:InscricaoMunicipal></Prestador><Protocolo>${p}</Protocolo></ConsultarSituacaoLoteRpsEnvio>`,
      );
    const waiting = await call('ConsultarSituacaoLoteRpsV3', situacao(protocolo));
    expect(waiting.answer).toContain('<ns3:Situacao>2</ns3:Situacao>');
    expect(validateXml('ginfesV3Resposta', waiting.answer)).toEqual({ ok: true });
    const early = await call('ConsultarNfsePorRpsV3', signedWhole(buildQueryByRps(facts, facts.cnpj, '123456')));
    expect(codes(early.answer)).toEqual(['E92']);
    const again = await call('RecepcionarLoteRpsV3', sent);
    expect(codes(again.answer)).toEqual(['E10']);
    // processed once the hold has passed (polled, so a loaded machine does not make it flaky)
    let done = await call('ConsultarSituacaoLoteRpsV3', situacao(protocolo));
    for (let i = 0; i < 50 && done.answer.includes('<ns3:Situacao>2</ns3:Situacao>'); i++) {
      await new Promise((r) => setTimeout(r, 200));
      done = await call('ConsultarSituacaoLoteRpsV3', situacao(protocolo));
    }
    expect(done.answer).toContain('<ns3:Situacao>4</ns3:Situacao>');
    const found = await call('ConsultarNfsePorRpsV3', signedWhole(buildQueryByRps(facts, facts.cnpj, '123456')));
    expect(validateXml('ginfesV3Resposta', found.answer)).toEqual({ ok: true });
    expect(found.answer).toMatch(/<tipos:CodigoVerificacao>\w{9}<\/tipos:CodigoVerificacao>/);
    const unknown = await call('ConsultarSituacaoLoteRpsV3', situacao('999'));
    expect(codes(unknown.answer)).toEqual(['E86']);
  });

  it('processes a lote without CNAE as "processado com erro" (E105): GINFES requires it', async () => {
    const engine = createEngine(ginfesFamily, {
      http,
      endpoints: { url: base },
      signatureAlgorithm: 'rsa-sha1',
      validateBeforeSend: true,
    });
    const sent = lote((xml) => xml.replace(/<tipos:CodigoCnae>\d+<\/tipos:CodigoCnae>/, ''));
    const document = { id: 'x', xml: sent };
    const connection = { certificate, ambiente: 2 as const, municipality: '3518800' };
    const outcome = await engine.issue(document, connection);
    expect(outcome.kind).toBe('pending');
    const protocol = outcome.kind === 'pending' ? outcome.protocol : '';
    let polled = await engine.poll(protocol, document, connection);
    for (let i = 0; i < 50 && polled.kind === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      polled = await engine.poll(protocol, document, connection);
    }
    expect(polled.kind).toBe('rejected');
    expect(polled.kind === 'rejected' && polled.errorCode).toBe('E105');
  });

  it('refuses with the ABRASF 1.0 codes: unsigned (E1), outside the schema (E160), another certificate (E157)', async () => {
    const unsigned = lote().replace(/<Signature[\s\S]*<\/Signature>/, '');
    expect(codes((await call('RecepcionarLoteRpsV3', unsigned)).answer)).toEqual(['E1']);
    const invalid = lote((xml) =>
      xml
        .replace('<tipos:QuantidadeRps>', '<tipos:Quantidade>')
        .replace('</tipos:QuantidadeRps>', '</tipos:Quantidade>'),
    );
    expect(codes((await call('RecepcionarLoteRpsV3', invalid)).answer)).toEqual(['E160']);
    expect(codes((await call('RecepcionarLoteRpsV3', lote(), other)).answer)).toEqual(['E157']);
    const badHeader = await post(envelope('RecepcionarLoteRpsV3', ['<cabecalho versao="3"/>', lote()]));
    expect(codes(badHeader.answer)).toEqual(['E160']);
  });

  it('speaks JAX-RPC only: the environment namespace, two unqualified args, V3 operations, a client certificate', async () => {
    const wrongNs = await post(
      envelope('RecepcionarLoteRpsV3', [cabecalho(), lote()], 'http://producao.ginfes.com.br'),
    );
    expect(wrongNs.status).toBe(500);
    expect(wrongNs.text).toContain('faultcode');
    const oneArg = await post(envelope('RecepcionarLoteRpsV3', [lote()]));
    expect(oneArg.text).toContain('arg0');
    const legacy = await post(envelope('RecepcionarLoteRps', [lote()]));
    expect(legacy.text).toContain('Operação não suportada');
    const anonymous = await request(base(), {
      method: 'POST',
      body: envelope('ConsultarNfseV3', [cabecalho(), '<x/>']),
    }).catch((err: Error) => err);
    if (!(anonymous instanceof Error)) expect(anonymous.statusCode).toBe(403);
  });
});
