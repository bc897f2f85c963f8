import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { at, child, childElements, escapeXml, parseDom } from '../kit/xml-dom.ts';
import { validateXml } from '../../xml/xsd.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import { BH_NS, bhAnswer } from './bh-answers.ts';
import { type AbrasfV1SandboxOptions, type AbrasfV1SandboxProfile, createAbrasfV1Service } from './service.ts';
import { cabecalhoCheck } from './wsdl.ts';

/**
 * CIGA (ACBr CIGA.Provider.pas; the provider's nfse.xsd as ACBr ships it: Belo Horizonte's ABRASF 1.00 schema):
 * `<{Op}Request>` in `http://nfse.abrasf.org.br` with unqualified nfseCabecMsg (cabecalho versao 1.00) and
 * nfseDadosMsg, SOAPAction `http://nfse.abrasf.org.br/<Op>`; nothing signed, client certificate on TLS. The generic
 * ABRASF 1.00 service does the work; this file answers `<{Op}Response><outputXML>` (the escaped answer) in BH's
 * shapes (Nfse@versao, RetCancelamento) and checks each answer against the provider's schema before it leaves.
 */
const SERVICE_NS = 'http://nfse.abrasf.org.br';
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const op = (operation: AbrasfV1SandboxProfile['operations'][string]['operation'], action: string) => ({
  operation,
  soapAction: `${SERVICE_NS}/${action}`,
  parameter: 'nfseDadosMsg',
});

export const CIGA_PROFILE: AbrasfV1SandboxProfile = {
  engine: 'abrasf-v1:ciga',
  slug: 'ciga',
  name: 'CIGA',
  schema: 'abrasf100CIGA',
  dataNamespace: BH_NS,
  soap: {
    namespace: SERVICE_NS,
    qualifiedParameters: false,
    header: { parameter: 'nfseCabecMsg', valid: cabecalhoCheck({ versao: '1.00' }) },
    result: 'outputXML',
  },
  operations: {
    RecepcionarLoteRpsRequest: op('recepcionar', 'RecepcionarLoteRps'),
    ConsultarSituacaoLoteRpsRequest: op('consultarSituacao', 'ConsultarSituacaoLoteRps'),
    ConsultarLoteRpsRequest: op('consultarLote', 'ConsultarLoteRps'),
    ConsultarNfseRpsRequest: op('consultarPorRps', 'ConsultarNfsePorRps'),
    ConsultarNfseRequest: op('consultarNfse', 'ConsultarNfse'),
    CancelarNfseRequest: op('cancelar', 'CancelarNfse'),
  },
  note: { idAttribute: 'Id', competencia: 'dateTime', cancellation: 'official' },
  clientCertificate: true,
  signature: { rps: false, lote: false, queries: false, cancel: false },
};

function soap(inner: string): SandboxReply {
  return {
    status: 200,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${SOAP_NS}"><s:Body>${inner}</s:Body></s:Envelope>`,
  };
}

export function createCigaService(deps: MunicipalSandboxDependencies & AbrasfV1SandboxOptions): SandboxService {
  const inner = createAbrasfV1Service(CIGA_PROFILE, deps);
  const handler = inner.routes[0]!.handler;

  async function soapPost(req: SandboxRequest): Promise<SandboxReply> {
    const reply = await handler(req);
    const envelope = parseDom(String(reply.body)).documentElement!;
    const response = childElements(child(envelope, 'Body')!)[0]!;
    if (response.localName === 'Fault') return reply;
    const answer = bhAnswer(at(response, 'outputXML')?.textContent ?? '');
    const valid = validateXml(CIGA_PROFILE.schema, answer);
    if (!valid.ok) throw new Error(`sandbox CIGA: its own answer is outside the schema: ${valid.errors[0]}`);
    const name = response.localName.replace(/RequestResponse$/, 'Response');
    return soap(`<o:${name} xmlns:o="${SERVICE_NS}"><outputXML>${escapeXml(answer)}</outputXML></o:${name}>`);
  }

  return { ...inner, routes: [{ ...inner.routes[0]!, handler: soapPost }] };
}

export const cigaSandbox: MunicipalSandbox = {
  engine: CIGA_PROFILE.engine,
  slug: CIGA_PROFILE.slug,
  create: (deps) => createCigaService(deps),
};
