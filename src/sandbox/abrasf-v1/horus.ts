import { XMLSerializer } from '@xmldom/xmldom';
import { validateXml } from '../../xml/xsd.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { readSoap11Call } from '../kit/soap11.ts';
import { at, child, childElements, escapeXml, parseDom } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import { bhAnswer } from './bh-answers.ts';
import { type AbrasfV1SandboxOptions, type AbrasfV1SandboxProfile, createAbrasfV1Service } from './service.ts';

/**
 * Horus (ACBr Horus.Provider.pas; the provider's nfse.xsd as ACBr ships it: Belo Horizonte's ABRASF 1.00 schema). One
 * sandbox answers the training host and every city's host:
 * - SOAP 1.1; the operation element (named after the message: EnviarLoteRpsEnvio, …) in
 *   `http://<alias>.horusdm.com.br/service?wsdl`, its unqualified `<xml>` holding the escaped message; the
 *   SOAPAction must be that namespace + `#` + the operation; the answer escaped in `return`.
 * - the ABRASF work (XSD validation, the TLS client certificate, lotes, E-codes) is the generic ABRASF 1.00
 *   service's, nothing signed (as ACBr sends it); this file checks the city namespace and gives the answers BH's
 *   shapes: Nfse@versao, the cancellation as RetCancelamento{NfseCancelamento@versao{Confirmacao{Pedido,
 *   DataHoraCancelamento}, Signature}}, NfseCancelamento@versao inside CompNfse. Every answer is checked against the
 *   provider's schema before it leaves.
 */
const DATA_NS = 'http://www.abrasf.org.br/nfse.xsd';
const INTERNAL_NS = 'urn:sandbox:horus';
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const CITY_NS = /^http:\/\/[a-z0-9-]+\.horusdm\.com\.br\/service\?wsdl$/;
const op = (operation: AbrasfV1SandboxProfile['operations'][string]['operation']) => ({
  operation,
  soapAction: '',
  parameter: 'xml',
});

export const HORUS_PROFILE: AbrasfV1SandboxProfile = {
  engine: 'abrasf-v1:horus',
  slug: 'horus',
  name: 'Horus',
  schema: 'abrasf100Horus',
  dataNamespace: DATA_NS,
  soap: { namespace: INTERNAL_NS, qualifiedParameters: false, result: 'return' },
  operations: {
    EnviarLoteRpsEnvio: op('recepcionar'),
    ConsultarSituacaoLoteRpsEnvio: op('consultarSituacao'),
    ConsultarLoteRpsEnvio: op('consultarLote'),
    ConsultarNfseRpsEnvio: op('consultarPorRps'),
    ConsultarNfseEnvio: op('consultarNfse'),
    CancelarNfseEnvio: op('cancelar'),
  },
  note: { idAttribute: 'Id', competencia: 'dateTime', cancellation: 'official' },
  clientCertificate: true,
  signature: { rps: false, lote: false, queries: false, cancel: false },
};

const serialize = (node: Node) => new XMLSerializer().serializeToString(node);

function soap(status: number, inner: string): SandboxReply {
  return {
    status,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${SOAP_NS}"><s:Body>${inner}</s:Body></s:Envelope>`,
  };
}
const fault = (text: string) =>
  soap(500, `<s:Fault><faultcode>s:Client</faultcode><faultstring>${escapeXml(text)}</faultstring></s:Fault>`);

export function createHorusService(deps: MunicipalSandboxDependencies & AbrasfV1SandboxOptions): SandboxService {
  const inner = createAbrasfV1Service(HORUS_PROFILE, deps);
  const handler = inner.routes[0]!.handler;

  async function soapPost(req: SandboxRequest): Promise<SandboxReply> {
    const read = readSoap11Call(req.body);
    if (!read.ok) return fault(read.message);
    const call = read.call;
    const namespace = call?.namespaceURI ?? '';
    if (!call || !CITY_NS.test(namespace) || !HORUS_PROFILE.operations[call.localName])
      return fault(`Operação não suportada: ${call?.localName ?? '(vazia)'} em ${namespace || '(sem namespace)'}`);
    const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
    if (action !== `${namespace}#${call.localName}`)
      return fault(`SOAPAction ${action || '(vazia)'} não corresponde a ${namespace}#${call.localName}.`);
    const params = childElements(call);
    const internal =
      `<s:Envelope xmlns:s="${SOAP_NS}"><s:Body><o:${call.localName} xmlns:o="${INTERNAL_NS}">` +
      params.map(serialize).join('') +
      `</o:${call.localName}></s:Body></s:Envelope>`;
    const reply = await handler({
      ...req,
      body: Buffer.from(internal, 'utf8'),
      headers: { ...req.headers, soapaction: '""' },
    });
    const replyEnvelope = parseDom(String(reply.body)).documentElement!;
    const response = childElements(child(replyEnvelope, 'Body')!)[0]!;
    if (response.localName === 'Fault') return reply;
    const answer = bhAnswer(at(response, 'return')?.textContent ?? '');
    const valid = validateXml(HORUS_PROFILE.schema, answer);
    if (!valid.ok) throw new Error(`sandbox Horus: its own answer is outside the schema: ${valid.errors[0]}`);
    return soap(
      200,
      `<ns:${call.localName}Response xmlns:ns="${escapeXml(namespace)}"><return>${escapeXml(answer)}</return></ns:${call.localName}Response>`,
    );
  }

  return { ...inner, routes: [{ ...inner.routes[0]!, handler: soapPost }] };
}

export const horusSandbox: MunicipalSandbox = {
  engine: HORUS_PROFILE.engine,
  slug: HORUS_PROFILE.slug,
  create: (deps) => createHorusService(deps),
};
