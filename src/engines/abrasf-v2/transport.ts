import { escapeXmlText } from '../../xml/escape.ts';
import { child, childElements, findDescendant, outerXml, parseXml, text } from '../../xml/read.ts';
import { MissingCredentialError } from '../kit/auth.ts';
import { transportFailure } from '../kit/engine.ts';
import { type OperationName, type OperationRequest, type SendContext, UnknownEndpointError } from '../kit/family.ts';
import type { HttpAnswer } from '../kit/http-client.ts';
import { readSoapAnswer, SOAP_NAMESPACES, type SoapPart, soapEnvelope } from '../kit/soap.ts';
import { municipalityRegistry } from '../routing/municipality-registry.ts';
import type { GovernmentError, Outcome } from '../types.ts';
import { type AbrasfOperation, type AbrasfProviderConfig, type AnswerMessages, messageOf } from './config.ts';
import { classifyCode } from './errors.ts';
import { cabecalho } from './messages.ts';

/**
 * The SOAP idioms of the ABRASF 2.0x providers (§12.B.2–3) from the configuration, and the one reader of their
 * answers: the answer message is found wherever the idiom puts it (`outputXML` string, `<Op>Result`, inline, or the
 * body itself), and its message lists become the outcome's errors.
 */

function operationElement(config: AbrasfProviderConfig, soapOperation: string): string {
  return config.soap.operationCase === 'camel'
    ? soapOperation.charAt(0).toLowerCase() + soapOperation.slice(1)
    : soapOperation;
}

function credentialsOf(context: SendContext): { username: string; password: string } {
  const credentials = context.credentials ?? {};
  const username = credentials.municipalUser ?? credentials.basicAuthUsuario;
  const password = credentials.municipalPassword ?? credentials.basicAuthSenha;
  if (!username) throw new MissingCredentialError('municipalUser');
  if (!password) throw new MissingCredentialError('municipalPassword');
  return { username, password };
}

function encoded(value: string, encoding: AbrasfProviderConfig['body']['encoding']): string {
  if (encoding === 'raw') return value;
  if (encoding === 'cdata') return `<![CDATA[${value.replaceAll(']]>', ']]]]><![CDATA[>')}]]>`;
  return escapeXmlText(value);
}

const WSSE = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd';
const WSU = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd';
const PASSWORD_TEXT = 'http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText';

/** The envelope with the provider's SOAP Header (a WS-Security UsernameToken: Saatri), when it has one. */
function withHeader(config: AbrasfProviderConfig, context: SendContext, envelope: string): string {
  if (config.soap.security !== 'usernameToken') return envelope;
  const { username, password } = credentialsOf(context);
  const header =
    `<soap:Header><wsse:Security soap:mustUnderstand="1" xmlns:wsse="${WSSE}" xmlns:wsu="${WSU}">` +
    `<wsse:UsernameToken wsu:Id="UsernameToken-1"><wsse:Username>${escapeXmlText(username)}</wsse:Username>` +
    `<wsse:Password Type="${PASSWORD_TEXT}">${escapeXmlText(password)}</wsse:Password></wsse:UsernameToken>` +
    '</wsse:Security></soap:Header>';
  return envelope.replace('<soap:Body>', `${header}<soap:Body>`);
}

/** The registry's URL of the operation, after the provider's rewrites. */
export function urlOf(config: AbrasfProviderConfig, context: SendContext, kitOperation: OperationName): string {
  let url = context.endpoints.url(kitOperation, context.ambiente, context.municipality);
  for (const rewrite of config.endpointRewrites ?? []) url = url.replace(rewrite.from, rewrite.to);
  if (config.urlCredential) {
    const { param, credential } = config.urlCredential;
    const value = context.credentials?.[credential];
    if (!value) throw new MissingCredentialError(credential);
    url += `${url.includes('?') ? '&' : '?'}${param}=${encodeURIComponent(value.trim())}`;
  }
  return url;
}

/** The operation's own endpoint (config `operationFiles`), or the URL as it is. */
function operationUrl(config: AbrasfProviderConfig, operation: AbrasfOperation, ambiente: 1 | 2, url: string): string {
  const files = config.operationFiles;
  const file = files?.files[operation];
  if (!files || !file) return url;
  const last =
    url
      .replace(/[?#].*$/, '')
      .split('/')
      .pop() ?? '';
  if (!new RegExp(files.segment).test(last)) return url;
  const cut = url.lastIndexOf(last);
  return url.slice(0, cut) + (ambiente === 1 ? file.production : file.homologation) + url.slice(cut + last.length);
}

/**
 * The configuration as the city speaks it (config `soap.perCity`): its namespace and SOAPAction for the environment
 * and the body idiom of its registry option; any other configuration as it is.
 */
export function cityConfig(config: AbrasfProviderConfig, context: SendContext): AbrasfProviderConfig {
  const perCity = config.soap.perCity;
  if (!perCity) return config;
  const route = context.municipality ? municipalityRegistry().find(context.municipality) : undefined;
  const side = context.ambiente === 1 ? 'Pro' : 'Hom';
  const namespace = route?.parameters?.soap?.[`${side}NameSpace`];
  if (!namespace) {
    const environment = context.ambiente === 1 ? 'production' : 'homologation';
    throw new UnknownEndpointError(`${config.provider}: no ${environment} service for ${context.municipality}`);
  }
  const action = route?.parameters?.soap?.[`${side}SoapAction`] || namespace;
  const option = perCity.bodyByOption;
  const body = option ? option.values[String(route?.parameters?.options?.[option.option] ?? '')] : undefined;
  const { homologation: _, ...soap } = config.soap;
  return {
    ...config,
    soap: { ...soap, namespace, soapAction: perCity.soapAction.replace('{city}', action) },
    body: { ...config.body, ...body },
  };
}

/** One ABRASF operation as a SOAP request, in the provider's idiom. */
export function abrasfRequest(
  config: AbrasfProviderConfig,
  operation: AbrasfOperation,
  message: string,
  context: SendContext,
  kitOperation: OperationName,
): OperationRequest {
  config = cityConfig(config, context);
  const row = messageOf(config, operation);
  message = config.hooks?.message ? config.hooks.message(operation, message, context) : message;
  const op = operationElement(config, row.soapOperation);
  const homologation = context.ambiente === 2 ? config.soap.homologation : undefined;
  const template = homologation?.soapAction ?? config.soap.soapAction;
  const soapAction =
    (context.ambiente === 2 ? row.homologationSoapAction : undefined) ??
    row.soapAction ??
    template.replace('{op}', op).replace('{root}', row.requestRoot);
  const namespace = homologation?.namespace ?? config.soap.namespace;
  const names = config.body.stringNames ?? { cabecalho: 'nfseCabecMsg', dados: 'nfseDadosMsg' };
  const qualified = config.body.qualifiedStrings === true;
  const rewrite = row.urlRewrite;
  const registryUrl = operationUrl(config, operation, context.ambiente, urlOf(config, context, kitOperation));
  const url = rewrite ? registryUrl.replace(new RegExp(rewrite.pattern), rewrite.replacement) : registryUrl;
  const { style } = config.body;
  const encoding = row.encoding ?? config.body.encoding;
  const stringParts = (): SoapPart[] => [
    ...(config.body.cabecalho
      ? [{ name: names.cabecalho, value: cabecalho(config), encoding: 'xml' as const, qualified }]
      : []),
    { name: names.dados, value: message, encoding: 'xml', qualified },
  ];
  const withEncoding = (parts: SoapPart[]): SoapPart[] =>
    parts.map((p) => ({ ...p, encoding: encoding === 'raw' ? 'xml' : encoding }));
  let parts: SoapPart[];
  let element = op;
  if (style === 'json') {
    const { username, password } = credentialsOf(context);
    const body = JSON.stringify({ xml: message, usuario: username, senha: password });
    return { method: 'POST', url, headers: { 'content-type': 'application/json; charset=utf-8' }, body };
  }
  if (style === 'bareMessage') {
    const env = SOAP_NAMESPACES[config.soap.version];
    const { headers } = soapEnvelope({
      version: config.soap.version,
      namespace: '',
      operation: op,
      parts: [],
      soapAction,
    });
    const body = `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${env}"><soap:Body>${message}</soap:Body></soap:Envelope>`;
    return { method: 'POST', url, headers, body: withHeader(config, context, body) };
  }
  if (style === 'abrasfRequest' || style === 'opParams') {
    element = style === 'abrasfRequest' ? `${op}Request` : op;
    parts = withEncoding(stringParts());
  } else if (style === 'stringParam') {
    const qualifiedParam = config.body.qualifiedStrings !== false;
    parts = withEncoding([
      { name: config.body.param ?? 'xml', value: message, encoding: 'xml', qualified: qualifiedParam },
    ]);
  } else if (style === 'doubleWrap') {
    const inner = stringParts()
      .map((p) => `<${p.name}>${encoded(p.value, encoding)}</${p.name}>`)
      .join('');
    parts = [
      {
        name: `${op}Request`,
        value: `<ns:${op}Request>${inner}</ns:${op}Request>`,
        encoding: 'xml',
        qualified: false,
        bare: true,
      },
    ];
  } else {
    parts = [{ name: row.requestRoot, value: message, encoding: 'xml', qualified: false, bare: true }];
  }
  if (config.body.credentials) {
    const { username, password } = credentialsOf(context);
    parts.push(
      { name: 'username', value: username, encoding: 'escaped', qualified: false },
      { name: 'password', value: password, encoding: 'escaped', qualified: false },
    );
  }
  const { body, headers } = soapEnvelope({
    version: config.soap.version,
    namespace,
    operation: element,
    parts,
    soapAction,
  });
  return { method: 'POST', url, headers, body: withHeader(config, context, body) };
}

export interface AbrasfAnswer {
  /** the answer message (EnviarLoteRpsResposta, GerarNfseResposta, …) */
  root: Element;
  /** ListaMensagemRetorno and ListaMensagemRetornoLote (errors; alerts are not errors) */
  errors: GovernmentError[];
  httpStatus: number;
}

const OFFICIAL_MESSAGES: AnswerMessages = {
  entries: [],
  codigo: ['Codigo'],
  mensagem: ['Mensagem'],
  correcao: ['Correcao'],
};

function messagesOf(root: Element, shape: AnswerMessages = OFFICIAL_MESSAGES): GovernmentError[] {
  const out: GovernmentError[] = [];
  const entries = new Set(['MensagemRetorno', ...shape.entries]);
  const first = (m: Element, names: readonly string[]) => names.map((n) => text(m, n)).find((v) => v !== null) ?? null;
  const push = (m: Element) => {
    const codigo = first(m, shape.codigo) ?? 'SEM_CODIGO';
    out.push({ Codigo: codigo, Descricao: first(m, shape.mensagem) ?? codigo, Complemento: first(m, shape.correcao) });
  };
  const visit = (el: Element) => {
    for (const c of childElements(el)) {
      if (c.localName === 'ListaMensagemRetorno' || c.localName === 'ListaMensagemRetornoLote') {
        for (const m of childElements(c).filter((e) => entries.has(e.localName!))) push(m);
      } else if (shape.entries.includes(c.localName!)) {
        // a provider's entries outside any list (Sudoeste's clients read them at the answer's root too)
        push(c);
      } else if (c.localName !== 'ListaMensagemAlertaRetorno' && c.localName !== 'CompNfse') visit(c);
    }
  };
  visit(root);
  return out;
}

function findRoot(xml: string, roots: readonly string[]): Element | null {
  const parsed = parseXml(xml.trim());
  if (!parsed.ok) return null;
  for (const name of roots) {
    const found = findDescendant(parsed.root, name);
    if (found) return found;
  }
  return null;
}

/** The message inside the escaped string element `name`, wherever the idiom nests it (Coplan's GeneXus answers). */
function stringAnswerRoot(body: string, name: string, roots: readonly string[]): Element | null {
  const parsed = parseXml(body.trim());
  const holder = parsed.ok ? findDescendant(parsed.root, name) : null;
  const value = holder?.textContent?.trim();
  return value ? findRoot(value, roots) : null;
}

/**
 * The answer message of an operation, or the outcome that replaces it: transport failures, HTTP 429/5xx and SOAP
 * Server faults are transient (nothing processed); a SOAP Client fault is a rejection; an answer without the
 * expected message is unknown. `bare`: the answer is the ABRASF message itself, no SOAP envelope (the `json` style).
 */
export function readAbrasfAnswer(
  answer: HttpAnswer,
  roots: readonly string[],
  shape?: AnswerMessages,
  answerString?: string,
  bare = false,
): Outcome<never> | AbrasfAnswer {
  if (answer.kind !== 'response') return transportFailure(answer);
  const status = answer.status;
  if (status === 429) return { kind: 'transient', reason: 'HTTP 429', httpStatus: status };
  const soap = readSoapAnswer(answer.body);
  if (soap.kind === 'fault') {
    const client = /client|sender/i.test(soap.code);
    if (!client && status >= 500)
      return { kind: 'transient', reason: `${soap.code}: ${soap.reason}`, httpStatus: status };
    const error = { Codigo: soap.code, Descricao: soap.reason || soap.code };
    return {
      kind: 'rejected',
      errorCode: soap.code,
      errorMessage: error.Descricao,
      errors: [error],
      httpStatus: status,
    };
  }
  const bareRoot = bare && soap.kind === 'unreadable' ? findRoot(answer.body, roots) : null;
  if (bareRoot) return { root: bareRoot, errors: messagesOf(bareRoot, shape), httpStatus: status };
  if (soap.kind === 'unreadable') {
    if (status >= 500) return { kind: 'transient', reason: `HTTP ${status}`, httpStatus: status };
    return { kind: 'unknown', reason: `unreadable ABRASF answer: ${soap.reason}` };
  }
  const root =
    (answerString ? stringAnswerRoot(answer.body, answerString, roots) : null) ??
    (soap.result ? findRoot(soap.result, roots) : null) ??
    findRoot(answer.body, roots);
  if (!root) {
    if (status >= 500) return { kind: 'transient', reason: `HTTP ${status}`, httpStatus: status };
    return { kind: 'unknown', reason: `ABRASF answer without ${roots.join(' or ')}` };
  }
  return { root, errors: messagesOf(root, shape), httpStatus: status };
}

export function rejectedBy(errors: GovernmentError[], httpStatus?: number): Outcome<never> {
  const first = errors[0] ?? { Codigo: 'SEM_CODIGO', Descricao: 'refused without a message' };
  return {
    kind: 'rejected',
    errorCode: first.Codigo,
    errorMessage: first.Descricao,
    errors,
    ...(httpStatus ? { httpStatus } : {}),
  };
}

/** Whether any error of the list has this classification (official table plus the provider's codes). */
export function hasClass(
  config: AbrasfProviderConfig,
  errors: GovernmentError[],
  kind: 'alreadyProcessed' | 'alreadyCancelled' | 'stillProcessing' | 'notFound' | 'protocolUnknown',
): boolean {
  return errors.some((e) => classifyCode(config, e.Codigo) === kind);
}

/** The CompNfse elements of an answer, each with its RPS identification. */
export function compNfseOf(root: Element): { comp: Element; numero: string | null; serie: string | null }[] {
  const out: { comp: Element; numero: string | null; serie: string | null }[] = [];
  const visit = (el: Element) => {
    for (const c of childElements(el)) {
      if (c.localName === 'CompNfse') {
        const ident = findDescendant(c, 'IdentificacaoRps');
        const dps = ident ? null : findDescendant(c, 'infDPS');
        out.push({
          comp: c,
          numero: ident ? text(ident, 'Numero') : text(dps, 'nDPS'),
          serie: ident ? text(ident, 'Serie') : text(dps, 'serie'),
        });
      } else visit(c);
    }
  };
  visit(root);
  return out;
}

export { child, outerXml, text };
