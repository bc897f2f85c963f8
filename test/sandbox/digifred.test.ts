import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digifredFamily } from '../../src/engines/dps-provider/digifred.ts';
import { digifredSandbox } from '../../src/sandbox/soap-string/digifred.ts';
import { signXml } from '../../src/xml/sign.ts';
import { normalized, startMunicipalSandbox } from '../conformance/soap-string-support.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';

/**
 * The Digifred sandbox's own rules, over raw SOAP: the empty identifiers and the whole-document signature only,
 * the client certificate, SOAPAction, and answers carrying two XML declarations inside CDATA.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4300505',
  ...IBS_CBS_FRAMING,
});

let env: Awaited<ReturnType<typeof startMunicipalSandbox>>;
let withCertificate: Agent;
let anonymous: Agent;
let number = 700_000 + (Date.now() % 100_000);

beforeAll(async () => {
  env = await startMunicipalSandbox(digifredSandbox, project);
  withCertificate = new Agent({
    connect: { ca: env.caPem, key: env.certificate.keyPem, cert: env.certificate.certPem },
  });
  anonymous = new Agent({ connect: { ca: env.caPem } });
});
afterAll(async () => {
  await withCertificate?.close();
  await anonymous?.close();
  await env?.close();
});

const unsigned = () =>
  digifredFamily.declaration.build({
    project,
    invoice: normalized(project),
    serie: '1',
    number: ++number,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: env.certificate,
  }).xml;

const sign = (xml: string, elementName?: string) =>
  signXml(xml, {
    ...(elementName ? { elementName } : {}),
    key: { privateKey: env.certificate.privateKey, certificatePem: env.certificate.certPem },
    algorithm: 'rsa-sha256',
  });

async function soap(xml: string, options: { action?: string; agent?: Agent } = {}) {
  const ns = 'http://www.sped.fazenda.gov.br/nfse/wsdl';
  const body =
    `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><tns:GerarNfse xmlns:tns="${ns}">` +
    `<tns:param><![CDATA[${xml}]]></tns:param></tns:GerarNfse></soap:Body></soap:Envelope>`;
  const res = await request(`${env.url}/municipal/digifred/producaorestrita`, {
    method: 'POST',
    dispatcher: options.agent ?? withCertificate,
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${options.action ?? 'GerarNfse'}"` },
    body,
  });
  return { status: res.statusCode, text: await res.body.text() };
}

describe('Digifred sandbox', () => {
  it('issues from the NFSe with empty identifiers signed on the whole document, answering two declarations in CDATA', async () => {
    const res = await soap(sign(unsigned()));
    expect(res.status).toBe(200);
    expect(res.text).toContain(
      '<![CDATA[<?xml version="1.0" encoding="UTF-8"?><?xml version="1.0" encoding="UTF-8"?><GerarNfseResposta>',
    );
    expect(res.text).toMatch(/<infNFSe Id="NFS\d{50}">/);
  });

  it('refuses filled-in identifiers (a #Id reference) and answers the rule in ListaMensagemRetorno', async () => {
    const withId = unsigned().replace('<infNFSe Id=""', `<infNFSe Id="NFS${'1'.repeat(50)}"`);
    const res = await soap(sign(withId, 'infNFSe'));
    expect(res.text).toContain('<Codigo>E1235</Codigo>');
    expect(res.text).toContain('vazios');
  });

  it('refuses a tampered document, a missing client certificate and a wrong SOAPAction', async () => {
    const tampered = sign(unsigned()).replace('<vLiq>', '<vLiq>1');
    expect((await soap(tampered)).text).toContain('<Codigo>E0714</Codigo>');
    const anonymousAnswer = await soap(sign(unsigned()), { agent: anonymous });
    expect(anonymousAnswer.status).toBe(403);
    const wrongAction = await soap(sign(unsigned()), { action: 'CancelarNfse' });
    expect(wrongAction.text).toContain('<faultcode>soap:Client</faultcode>');
  });
});
