import { XMLSerializer } from '@xmldom/xmldom';
import { validateXml } from '../../xml/xsd.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { readSoap11Call } from '../kit/soap11.ts';
import { at, child, childElements, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import { signEnveloped } from '../kit/xml-signature.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import { type AbrasfV1SandboxOptions, type AbrasfV1SandboxProfile, createAbrasfV1Service } from './service.ts';
import { wsdlOperationTable } from './wsdl.ts';

/**
 * ISSIntel / ISSIntegra (ACBr ISSIntel.Provider.pas; the provider's nfse.xsd as ACBr ships it: Belo Horizonte's
 * ABRASF 1.00 schema with CodigoServicoNacional and the PIS/COFINS group; the per-city service namespaces of
 * ACBrNFSeXServicos.ini). One sandbox answers every city, as each city's own host would:
 * - SOAP 1.1; the operation element in a city namespace (`http(s)://<city>.[treino-]issintel|issintegra.com.br/
 *   webservices/abrasf/api`) holding the ABRASF message itself; the SOAPAction must be that namespace + `/` + the
 *   operation (the registry's SoapAction is the namespace with a trailing slash); the answer root inline in
 *   `<{Op}Response>` in the same namespace.
 * - the ABRASF work (XSD validation, signatures of the lote and of the cancellation, the TLS client certificate,
 *   lotes, E-codes) is the generic ABRASF 1.00 service's; this file translates the envelope and gives the answers
 *   BH's shapes: Nfse@versao, the cancellation as RetCancelamento{NfseCancelamento@versao{Confirmacao{Pedido,
 *   DataHora}, Signature}} (signed by the sandbox, also inside CompNfse of the consultations). Every answer is
 *   checked against the provider's schema before it leaves.
 */
const DATA_NS = 'http://www.abrasf.org.br/nfse.xsd';
const INTERNAL_NS = 'urn:sandbox:issintel';
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const CITY_NS =
  /^https?:\/\/[a-z0-9-]+(\.[a-z0-9-]+)*\.(treino-)?iss(intel|integra)\.com\.br\/webservices\/abrasf\/api$/;
const NOTE_SIGNATURE = {
  signatureAlgorithm: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
  digestAlgorithm: 'http://www.w3.org/2000/09/xmldsig#sha1',
  canonicalizationAlgorithm: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
};

export const ISSINTEL_PROFILE: AbrasfV1SandboxProfile = {
  engine: 'abrasf-v1:issintel',
  slug: 'issintel',
  name: 'ISSIntel',
  schema: 'abrasf100ISSIntel',
  dataNamespace: DATA_NS,
  soap: { namespace: INTERNAL_NS, qualifiedParameters: false, result: 'return' },
  operations: wsdlOperationTable(() => ({ soapAction: '', parameter: 'xml' })),
  note: { idAttribute: 'Id', competencia: 'dateTime', cancellation: 'official' },
  clientCertificate: true,
  signature: { rps: false, lote: true, queries: false, cancel: true },
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

export function createIssIntelService(deps: MunicipalSandboxDependencies & AbrasfV1SandboxOptions): SandboxService {
  const inner = createAbrasfV1Service(ISSINTEL_PROFILE, deps);
  const handler = inner.routes[0]!.handler;

  /** The generic confirmation (Confirmacao{Pedido, DataHoraCancelamento} + Signature) as BH's NfseCancelamento. */
  function nfseCancelamento(generic: Element): string {
    const confirmacao = child(generic, 'Confirmacao');
    const pedido = child(confirmacao, 'Pedido');
    if (!confirmacao || !pedido) throw new Error('sandbox ISSIntel: a cancellation without its confirmation');
    const id = confirmacao.getAttribute('Id') ?? 'canc';
    const pedidoXml = `<Pedido>${childElements(pedido).map(serialize).join('')}</Pedido>`;
    const holder =
      `<NfseCancelamento xmlns="${DATA_NS}" versao="1.00"><Confirmacao Id="${escapeXml(id)}">${pedidoXml}` +
      `<DataHora>${escapeXml(textAt(confirmacao, 'DataHoraCancelamento') ?? '')}</DataHora></Confirmacao></NfseCancelamento>`;
    return signEnveloped(
      holder,
      { rootName: 'NfseCancelamento', elementName: 'Confirmacao' },
      deps.signer,
      NOTE_SIGNATURE,
    );
  }

  /** The generic answer in BH's shapes. */
  function bhAnswer(answer: string): string {
    const doc = parseDom(answer);
    const root = doc.documentElement!;
    for (const nfse of Array.from(root.getElementsByTagNameNS(DATA_NS, 'Nfse'))) nfse.setAttribute('versao', '1.00');
    for (const generic of Array.from(root.getElementsByTagNameNS(DATA_NS, 'NfseCancelamento'))) {
      const replacement = parseDom(nfseCancelamento(generic)).documentElement!;
      generic.parentNode!.replaceChild(doc.importNode(replacement, true), generic);
    }
    const cancelamento = root.localName === 'CancelarNfseResposta' ? at(root, 'Cancelamento') : null;
    if (cancelamento) {
      const ret = doc.createElementNS(DATA_NS, 'RetCancelamento');
      ret.appendChild(doc.importNode(parseDom(nfseCancelamento(cancelamento)).documentElement!, true));
      root.replaceChild(ret, cancelamento);
    }
    return serialize(root);
  }

  async function soapPost(req: SandboxRequest): Promise<SandboxReply> {
    const read = readSoap11Call(req.body);
    if (!read.ok) return fault(read.message);
    const call = read.call;
    const namespace = call?.namespaceURI ?? '';
    if (!call || !CITY_NS.test(namespace) || !ISSINTEL_PROFILE.operations[call.localName])
      return fault(`Operação não suportada: ${call?.localName ?? '(vazia)'} em ${namespace || '(sem namespace)'}`);
    const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
    if (action !== `${namespace}/${call.localName}`)
      return fault(`SOAPAction ${action || '(vazia)'} não corresponde a ${namespace}/${call.localName}.`);
    const messages = childElements(call);
    if (messages.length !== 1) return fault(`${call.localName}: esperada a mensagem ABRASF como único filho.`);
    const internal =
      `<s:Envelope xmlns:s="${SOAP_NS}"><s:Body><o:${call.localName} xmlns:o="${INTERNAL_NS}">` +
      `<xml>${escapeXml(serialize(messages[0]!))}</xml></o:${call.localName}></s:Body></s:Envelope>`;
    const reply = await handler({
      ...req,
      body: Buffer.from(internal, 'utf8'),
      headers: { ...req.headers, soapaction: '""' },
    });
    const replyEnvelope = parseDom(String(reply.body)).documentElement!;
    const response = childElements(child(replyEnvelope, 'Body')!)[0]!;
    if (response.localName === 'Fault') return reply;
    const answer = bhAnswer(at(response, 'return')?.textContent ?? '');
    const valid = validateXml(ISSINTEL_PROFILE.schema, answer);
    if (!valid.ok) throw new Error(`sandbox ISSIntel: its own answer is outside the schema: ${valid.errors[0]}`);
    return soap(200, `<ns:${call.localName}Response xmlns:ns="${namespace}">${answer}</ns:${call.localName}Response>`);
  }

  return {
    ...inner,
    routes: [{ ...inner.routes[0]!, handler: soapPost }],
  };
}

export const issintelSandbox: MunicipalSandbox = {
  engine: ISSINTEL_PROFILE.engine,
  slug: ISSINTEL_PROFILE.slug,
  create: (deps) => createIssIntelService(deps),
};
