import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, request } from 'undici';
import { fiorilliDefinition } from '../../src/engines/dps-provider/fiorilli.ts';
import { createEngine } from '../../src/engines/kit/engine.ts';
import { GovernmentHttpClient } from '../../src/engines/kit/http-client.ts';
import { createFiorilliService, FIORILLI_NS } from '../../src/sandbox/fiorilli/service.ts';
import { preparedDocument, startRawXmlSandbox } from '../conformance/raw-xml-env.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';

/**
 * The Fiorilli sandbox on the wire: SOAP 1.1 `recepcionarDPS` with `RecepcionarDpsEnvio{DPS}` only, the client
 * certificate required, the XSD and the signature checked, `ListaMensagens/mensagem` with the national codes on
 * refusal, the signed national NFS-e in the answer on success.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3504008',
  inscricaoMunicipal: '12345',
  ...IBS_CBS_FRAMING,
});
const SOAP = 'http://schemas.xmlsoap.org/soap/envelope/';

let env: Awaited<ReturnType<typeof startRawXmlSandbox>>;
let client: Agent;
let anonymous: Agent;
let base: string;
let number = 7000;

function signedDps(): { id: string; xml: string } {
  const engine = createEngine(fiorilliDefinition, {
    http: new GovernmentHttpClient({ connectMs: 1000, responseMs: 1000 }, null),
    endpoints: { url: () => base },
    signatureAlgorithm: 'rsa-sha256',
    validateBeforeSend: true,
  });
  return preparedDocument(engine, { project, certificate: env.certificate, number: ++number });
}

const envelope = (inner: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP}"><soap:Body>` +
  `<fio:RecepcionarDpsEnvio xmlns:fio="${FIORILLI_NS}">${inner}</fio:RecepcionarDpsEnvio></soap:Body></soap:Envelope>`;

async function post(body: string, headers: Record<string, string> = {}, agent?: Agent) {
  const res = await request(`${base}/`, {
    method: 'POST',
    dispatcher: agent ?? client,
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '"recepcionarDPS"', ...headers },
    body,
  });
  return { status: res.statusCode, body: await res.body.text() };
}

beforeAll(async () => {
  env = await startRawXmlSandbox({ project, slug: 'fiorilli', create: (deps) => createFiorilliService(deps) });
  base = `${env.url}/municipal/fiorilli/producaorestrita`;
  client = new Agent({ connect: { key: env.certificate.keyPem, cert: env.certificate.certPem, ca: env.caPem } });
  anonymous = new Agent({ connect: { ca: env.caPem } });
});
afterAll(async () => {
  await client?.close();
  await anonymous?.close();
  await env?.close();
});

describe('Fiorilli sandbox', () => {
  it('issues the DPS of RecepcionarDpsEnvio with the NFS-e in the answer; a resend is E0014', async () => {
    const dps = signedDps();
    const res = await post(envelope(dps.xml));
    expect(res.status).toBe(200);
    expect(res.body).toContain('RecepcionarDpsResposta');
    expect(res.body).toMatch(/<NFSe xmlns="http:\/\/www\.sped\.fazenda\.gov\.br\/nfse"/);
    expect(res.body).toMatch(/<fio:Protocolo>\d+<\/fio:Protocolo>/);
    const again = await post(envelope(dps.xml));
    expect(again.body).toMatch(/<fio:mensagem><fio:Codigo>E0014<\/fio:Codigo>/);
    expect(again.body).not.toContain('<NFSe');
  });

  it('refuses another action, content type, extra parts (user/password), no certificate, a bad signature', async () => {
    const dps = signedDps();
    const action = await post(envelope(dps.xml), { soapaction: '"recepcionarLoteDps"' });
    expect(action.status).toBe(500);
    expect(action.body).toContain('soap:Client');
    expect((await post(envelope(dps.xml), { 'content-type': 'application/soap+xml' })).status).toBe(500);
    const credentials = await post(envelope(`${dps.xml}<username>u</username><password>p</password>`));
    expect(credentials.body).toContain('somente a DPS');
    const noCert = await post(envelope(dps.xml), {}, anonymous);
    expect(noCert.body).toContain('Certificado digital do cliente');
    const tampered = await post(envelope(dps.xml.replace('<xDescServ>', '<xDescServ>X')));
    expect(tampered.body).toMatch(/<fio:Codigo>E0714<\/fio:Codigo>/);
  });
});
