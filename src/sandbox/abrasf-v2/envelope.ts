import type { SandboxReply } from '../kit/server.ts';
import { child, childElements, escapeXml, parseDom } from '../kit/xml-dom.ts';
import type { AbrasfSandboxProfile } from './profiles.ts';

/**
 * The SOAP side of the generic ABRASF sandbox: reads a request in any of the idioms real clients send (the message
 * in `nfseDadosMsg` escaped, in CDATA or as raw elements, inside `<Op>Request`, `<Op>` or `<Op><Op>Request>`; the
 * message inline in the operation element with trailing credentials; the message as the body) and writes answers
 * in the provider's idiom. SOAP 1.1 and 1.2 are both accepted; the answer uses the request's version.
 */

export const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';

/** The request message roots of the official operations (for bodies that are the message itself). */
const ROOT_TO_OPERATION: Record<string, string> = {
  EnviarLoteRpsEnvio: 'RecepcionarLoteRps',
  EnviarLoteRpsSincronoEnvio: 'RecepcionarLoteRpsSincrono',
  GerarNfseEnvio: 'GerarNfse',
  CancelarNfseEnvio: 'CancelarNfse',
  SubstituirNfseEnvio: 'SubstituirNfse',
  ConsultarLoteRpsEnvio: 'ConsultarLoteRps',
  ConsultarNfseRpsEnvio: 'ConsultarNfsePorRps',
  ConsultarNfseFaixaEnvio: 'ConsultarNfsePorFaixa',
  ConsultarNfseServicoPrestadoEnvio: 'ConsultarNfseServicoPrestado',
  ConsultarNfseServicoTomadoEnvio: 'ConsultarNfseServicoTomado',
};

export interface ParsedCall {
  /** the official operation name (GerarNfse, …) */
  operation: string;
  soapVersion: '1.1' | '1.2';
  /** the message root, when the message is the body */
  root?: string;
  /** the ABRASF message as a standalone document (its own namespace declarations, no envelope context) */
  message: string | null;
  cabecalho: string | null;
  username: string | null;
  password: string | null;
}

/**
 * The raw text of the first `<name …>…</name>` element (any prefix) of a text, byte for byte: the signed parts keep
 * their exact bytes, and the envelope's namespace declarations (which inclusive C14N would otherwise pull in) are
 * left behind, as a server extracting the message does.
 */
export function rawElement(text: string, name: string): string | null {
  const open = new RegExp(`<(\\w+:)?${name}[\\s>/]`).exec(text);
  if (!open) return null;
  const closeTag = `</${open[1] ?? ''}${name}>`;
  const end = text.lastIndexOf(closeTag);
  return end < open.index ? null : text.slice(open.index, end + closeTag.length);
}

/** A string parameter's XML: raw child elements (their text), or the escaped / CDATA string (its value). */
function stringParameter(body: string, param: Element | null): string | null {
  if (!param) return null;
  const inner = childElements(param)[0];
  if (inner) return rawElement(body, inner.localName!);
  const value = (param.textContent ?? '').trim();
  return value || null;
}

const WSSE = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd';

/** The UsernameToken of a WS-Security header (Saatri), or nulls. */
function wsSecurityOf(envelope: Element): { username: string | null; password: string | null } {
  const token = childElements(child(envelope, 'Header') ?? envelope)
    .filter((e) => e.localName === 'Security' && e.namespaceURI === WSSE)
    .map((security) => child(security, 'UsernameToken'))[0];
  const value = (name: string) => child(token, name)?.textContent?.trim() || null;
  return { username: value('Username'), password: value('Password') };
}

/** A JSON request (`{"xml", "usuario", "senha"}`: Centi): the operation is the one of the message's root. */
function parseJsonCall(body: string): ParsedCall | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (err) {
    return { error: `JSON mal formado: ${(err as Error).message}` };
  }
  const field = (name: string) => {
    const value = (json as Record<string, unknown> | null)?.[name];
    return typeof value === 'string' && value.trim() ? value.trim() : null;
  };
  const message = field('xml');
  const root = message ? /^(?:<\?xml[^>]*\?>)?\s*<(?:\w+:)?(\w+)/.exec(message)?.[1] : undefined;
  const operation = root ? ROOT_TO_OPERATION[root] : undefined;
  if (!operation) return { error: `Mensagem desconhecida: ${root ?? '(xml ausente)'}` };
  return {
    operation,
    soapVersion: '1.1',
    root,
    message,
    cabecalho: null,
    username: field('usuario'),
    password: field('senha'),
  };
}

export function parseCall(profile: AbrasfSandboxProfile, body: string): ParsedCall | { error: string } {
  if (profile.request === 'json') return parseJsonCall(body);
  const call = parseEnvelope(profile, body);
  if ('error' in call || !profile.wsSecurity) return call;
  // credentials only from the header: body username/password elements are not the provider's contract
  return { ...call, ...wsSecurityOf(parseDom(body).documentElement!) };
}

function parseEnvelope(profile: AbrasfSandboxProfile, body: string): ParsedCall | { error: string } {
  let root: Element | null;
  try {
    root = parseDom(body).documentElement;
  } catch (err) {
    return { error: `XML mal formado: ${(err as Error).message}` };
  }
  if (root?.localName !== 'Envelope') return { error: 'A requisição não é um envelope SOAP.' };
  const soapVersion = root.namespaceURI === SOAP12 ? '1.2' : '1.1';
  const first = childElements(child(root, 'Body') ?? root)[0];
  if (!first) return { error: 'Corpo SOAP vazio.' };
  const none = { cabecalho: null, username: null, password: null };
  // a wrapper named like a message root but holding the string parameters (Sintese's `<GerarNfseEnvio>`) is not bare
  const bare = ROOT_TO_OPERATION[first.localName!] && !child(first, 'nfseDadosMsg');
  if (profile.request === 'bare' || bare) {
    const operation = ROOT_TO_OPERATION[first.localName!];
    if (!operation) return { error: `Mensagem desconhecida: ${first.localName}` };
    return { operation, soapVersion, root: first.localName!, message: rawElement(body, first.localName!), ...none };
  }
  let wrapper = first;
  const name = first.localName!.replace(/Request$/, '');
  const doubled = child(first, `${name}Request`);
  if (doubled) wrapper = doubled;
  const named = profile.operations.find((op) => op.toLowerCase() === name.toLowerCase());
  // a provider's own name of an official operation (DSF's ConsultarNfseFaixa) is read as the official one
  const operation = named ? (profile.operationNames?.[named] ?? named) : undefined;
  if (!operation) return { error: `Operação desconhecida: ${first.localName}` };
  if (profile.stringsWrapper) {
    const used = doubled ? 'double' : first.localName!.endsWith('Request') ? 'request' : 'operation';
    if (used !== profile.stringsWrapper) return { error: `Elemento inesperado: ${first.localName}` };
  }
  const credentialsNone = { username: null, password: null };
  const text = (n: string) => {
    const value = child(wrapper, n)?.textContent?.trim();
    return value ? value : null;
  };
  if (profile.stringParameter) {
    const param = child(wrapper, profile.stringParameter);
    if (!param) return { error: `Parâmetro ${profile.stringParameter} ausente em ${first.localName}.` };
    return { operation, soapVersion, message: stringParameter(body, param), cabecalho: null, ...credentialsNone };
  }
  const names = profile.stringNames ?? { cabecalho: 'nfseCabecMsg', dados: 'nfseDadosMsg' };
  const dados = child(wrapper, names.dados);
  if (dados) {
    return {
      operation,
      soapVersion,
      message: stringParameter(body, dados),
      cabecalho: stringParameter(body, child(wrapper, names.cabecalho)),
      username: text('username'),
      password: text('password'),
    };
  }
  const inline = childElements(wrapper).find((e) => !['username', 'password', 'nfseCabecMsg'].includes(e.localName!));
  return {
    operation,
    soapVersion,
    message: inline ? rawElement(body, inline.localName!) : null,
    cabecalho: null,
    username: text('username'),
    password: text('password'),
  };
}

function envelope(status: number, version: '1.1' | '1.2', inner: string): SandboxReply {
  const ns = version === '1.2' ? SOAP12 : SOAP11;
  return {
    status,
    headers: { 'content-type': version === '1.2' ? 'application/soap+xml; charset=utf-8' : 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${ns}"><soap:Body>${inner}</soap:Body></soap:Envelope>`,
  };
}

export function soapFault(status: number, code: 'Client' | 'Server', text: string, version: '1.1' | '1.2' = '1.1') {
  const inner =
    version === '1.2'
      ? `<soap:Fault><soap:Code><soap:Value>soap:${code === 'Client' ? 'Sender' : 'Receiver'}</soap:Value></soap:Code><soap:Reason><soap:Text xml:lang="pt-BR">${escapeXml(text)}</soap:Text></soap:Reason></soap:Fault>`
      : `<soap:Fault><faultcode>soap:${code}</faultcode><faultstring>${escapeXml(text)}</faultstring></soap:Fault>`;
  return envelope(status, version, inner);
}

/** `MensagemRetorno{Codigo, Mensagem, Correcao}` entries written as `Erro{ErroID, ErroMensagem, ErroSolucao}`. */
function erroEntries(answerXml: string): string {
  return answerXml.replace(/<MensagemRetorno>([\s\S]*?)<\/MensagemRetorno>/g, (_all, inner: string) => {
    const renamed = inner
      .replace(/<(\/?)Codigo>/g, '<$1ErroID>')
      .replace(/<(\/?)Mensagem>/g, '<$1ErroMensagem>')
      .replace(/<(\/?)Correcao>/g, '<$1ErroSolucao>');
    return `<Erro>${renamed}</Erro>`;
  });
}

/** The answer message in the provider's response idiom. */
export function soapAnswer(profile: AbrasfSandboxProfile, call: ParsedCall, answerXml: string): SandboxReply {
  if (profile.request === 'json') {
    const body = `<?xml version="1.0" encoding="utf-8"?>${answerXml}`;
    return { status: 200, headers: { 'content-type': 'application/xml; charset=utf-8' }, body };
  }
  const named =
    Object.entries(profile.operationNames ?? {}).find(([, official]) => official === call.operation)?.[0] ??
    call.operation;
  const op = profile.soap.operationCase === 'camel' ? named.charAt(0).toLowerCase() + named.slice(1) : named;
  const ns = profile.soap.namespace;
  if (profile.errorEntries === 'erro') answerXml = erroEntries(answerXml);
  const inner =
    profile.response === 'return'
      ? `<${op}Response xmlns="${ns}"><${op}Return>${escapeXml(answerXml)}</${op}Return></${op}Response>`
      : profile.response === 'bare'
        ? answerXml
        : profile.response === 'rootResponse'
          ? `<${call.root}Response xmlns="${profile.dataNamespace ?? ns}">${answerXml}</${call.root}Response>`
          : profile.response === 'inline'
            ? `<ns2:${op}Response xmlns:ns2="${ns}">${answerXml}</ns2:${op}Response>`
            : profile.response === 'result'
              ? `<${op}Response xmlns="${ns}"><${op}Result>${escapeXml(answerXml)}</${op}Result></${op}Response>`
              : `<ns:${op}Response xmlns:ns="${ns}"><outputXML>${escapeXml(answerXml)}</outputXML></ns:${op}Response>`;
  return envelope(200, call.soapVersion, inner);
}
