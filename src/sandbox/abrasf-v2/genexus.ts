import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { childElements, escapeXml, parseDom } from '../kit/xml-dom.ts';
import { soapFault } from './envelope.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';
import { type AbrasfSandboxOptions, createAbrasfService } from './service.ts';

/**
 * GeneXus SOAP idioms over the generic ABRASF 2.0x service (Coplan's `anfse_web_service`, SysISS's `aws`): the
 * operation element `<prefix><OP>` in the service namespace holding one request element, the SOAPAction
 * `<actionPrefix><OP>`, and the answer `<prefix><OP>Response` holding the provider's answer element. The layer checks
 * the idiom (operation, request element, parameter names and namespace, SOAPAction), hands the message on in the
 * official `<Op>Request{nfseCabecMsg, nfseDadosMsg}` wrapper, and writes the generic answer in the idiom's shape.
 * Official data only: the names come from the providers' public clients (cited in their profiles).
 */
export interface GenexusIdiom {
  /** namespace of the operation and request elements */
  serviceNamespace: string;
  /** the operation element is `<operationPrefix><OP>` (`nfse_web_service.`, `ws.`) */
  operationPrefix: string;
  /** SOAPAction = this + OP */
  actionPrefix: string;
  /** OP → the request element, the official operation, the answer element */
  operations: Readonly<Record<string, { request: string; official: string; answer: string }>>;
  /**
   * `cabecalhoDados`: CDATA `nfseCabecMsg`/`nfseDadosMsg` in the environment's namespace (Coplan), the answer element
   * holding `outputXML`; `single`: the request element is the escaped message itself, the answer element the escaped
   * answer (SysISS).
   */
  strings: { kind: 'cabecalhoDados'; namespaces: { producao: string; producaorestrita: string } } | { kind: 'single' };
}

const cdataOf = (text: string, name: string) =>
  new RegExp(`<(?:[\\w-]+:)?${name}>\\s*<!\\[CDATA\\[([\\s\\S]*?)\\]\\]>\\s*</(?:[\\w-]+:)?${name}>`).exec(text)?.[1];

/** The GeneXus request as the official wrapper, with its OP, or the fault that refuses it. */
function genexusRequest(
  idiom: GenexusIdiom,
  req: SandboxRequest,
): { request: SandboxRequest; op: string } | SandboxReply {
  const text = req.body.toString('utf8');
  let body: Element | undefined;
  try {
    body = childElements(parseDom(text).documentElement!).find((e) => e.localName === 'Body');
  } catch (err) {
    return soapFault(500, 'Client', `XML mal formado: ${(err as Error).message}`);
  }
  const operation = body ? childElements(body)[0] : undefined;
  const name = operation?.localName ?? '';
  const op = name.startsWith(idiom.operationPrefix) ? name.slice(idiom.operationPrefix.length) : '';
  const known = idiom.operations[op];
  if (!operation || operation.namespaceURI !== idiom.serviceNamespace || !known)
    return soapFault(500, 'Client', `Operação desconhecida: ${name || '(corpo vazio)'}`);
  const inner = childElements(operation);
  if (inner.length !== 1 || inner[0]!.localName !== known.request || inner[0]!.namespaceURI !== idiom.serviceNamespace)
    return soapFault(500, 'Client', `Esperado ${known.request} em ${name}.`);
  const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
  if (action !== idiom.actionPrefix + op)
    return soapFault(500, 'Client', `SOAPAction inválida: ${action || '(sem SOAPAction)'}`);
  let strings: string;
  if (idiom.strings.kind === 'cabecalhoDados') {
    const expected = idiom.strings.namespaces[req.params.ambiente === 'producao' ? 'producao' : 'producaorestrita'];
    const params = childElements(inner[0]!);
    const names = params.map((p) => p.localName).join(',');
    if (names !== 'nfseCabecMsg,nfseDadosMsg' || params.some((p) => p.namespaceURI !== expected))
      return soapFault(500, 'Client', `Parâmetros nfseCabecMsg e nfseDadosMsg esperados no namespace ${expected}.`);
    const cabecalho = cdataOf(text, 'nfseCabecMsg');
    const dados = cdataOf(text, 'nfseDadosMsg');
    if (cabecalho === undefined || dados === undefined)
      return soapFault(500, 'Client', 'nfseCabecMsg e nfseDadosMsg são textos CDATA.');
    strings = `<nfseCabecMsg><![CDATA[${cabecalho}]]></nfseCabecMsg><nfseDadosMsg><![CDATA[${dados}]]></nfseDadosMsg>`;
  } else {
    if (childElements(inner[0]!).length > 0)
      return soapFault(500, 'Client', `${known.request} é um texto (a mensagem escapada).`);
    strings = `<nfseDadosMsg>${escapeXml(inner[0]!.textContent ?? '')}</nfseDadosMsg>`;
  }
  const wrapped = `<nfse:${known.official}Request xmlns:nfse="http://nfse.abrasf.org.br">${strings}</nfse:${known.official}Request>`;
  const rewritten = text.replace(/(<(?:[\w-]+:)?Body\b[^>]*>)[\s\S]*(<\/(?:[\w-]+:)?Body>)/, `$1${wrapped}$2`);
  return { request: { ...req, body: Buffer.from(rewritten, 'utf8'), json: () => null }, op };
}

/** The generic `<Op>Response/outputXML` answer in the idiom's shape (faults pass as they are). */
function genexusReply(idiom: GenexusIdiom, reply: SandboxReply, op: string): SandboxReply {
  if (typeof reply.body !== 'string') return reply;
  const output = /<outputXML>([\s\S]*)<\/outputXML>/.exec(reply.body);
  if (!output) return reply;
  const answer = idiom.operations[op]!.answer;
  const content =
    idiom.strings.kind === 'cabecalhoDados'
      ? `<${answer}>${output[0]}</${answer}>`
      : `<${answer}>${output[1]}</${answer}>`;
  const element = `${idiom.operationPrefix}${op}Response`;
  const inner = `<${element} xmlns="${idiom.serviceNamespace}">${content}</${element}>`;
  return { ...reply, body: reply.body.replace(/(<soap:Body>)[\s\S]*(<\/soap:Body>)/, `$1${inner}$2`) };
}

/** The generic ABRASF service behind a GeneXus idiom. */
export function createGenexusService(
  idiom: GenexusIdiom,
  profile: AbrasfSandboxProfile,
  options: AbrasfSandboxOptions,
): SandboxService {
  const service = createAbrasfService(profile, options);
  return {
    ...service,
    routes: service.routes.map((route) => ({
      ...route,
      handler: async (req: SandboxRequest) => {
        const handed = genexusRequest(idiom, req);
        if ('status' in handed) return handed;
        return genexusReply(idiom, await route.handler(handed.request), handed.op);
      },
    })),
  };
}
