import { XMLSerializer } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { validateXml } from '../../xml/xsd.ts';
import { type IcpBrasilIdentity, readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import type { SandboxReply } from '../kit/server.ts';
import { at, child, childElements, escapeXml, parseDom, rootElementText, XMLDSIG_NS } from '../kit/xml-dom.ts';
import type { SandboxSigner } from '../kit/xml-signature.ts';
import type { DpsData } from '../sefin/dps.ts';
import { inscricaoOf, stripZeros } from '../sefin/dps.ts';
import { issueNationalNfse } from '../sefin/issue-nfse.ts';
import type { Ambiente, IssuedRecord, SefinStore } from '../sefin/store.ts';

/**
 * What the sandboxes of the CDATA/escaped-string SOAP services share (briefs/providers-own.md §5: SIL `<xml>`,
 * Digifred `<param>`, Coplan `nfseCabecMsg`/`nfseDadosMsg`): reading the SOAP 1.1 request and its string
 * parameters, writing answers and faults, the exclusive-C14N check, a whole-document (`URI=""`) verifier, and issuing
 * a national-style NFS-e into a Sefin-shaped store (../sefin/, sandbox code).
 */

export const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
export const NFSE_NS = 'http://www.sped.fazenda.gov.br/nfse';
export const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
export const SANDBOX_APP_VERSION = 'Municipal_Sbx_1.0.0';

export interface SoapRequest {
  /** the operation element's local name and namespace */
  operation: string;
  namespace: string | null;
  element: Element;
}

export class SoapClientError extends Error {}

/** The operation element of a SOAP 1.1 request (Body's first child); throws SoapClientError otherwise. */
export function readSoapRequest(body: Buffer): SoapRequest {
  let doc: Document;
  try {
    doc = parseDom(body.toString('utf8').replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new SoapClientError(`XML mal formado: ${(err as Error).message}`);
  }
  const envelope = doc.documentElement;
  if (envelope?.localName !== 'Envelope' || envelope.namespaceURI !== SOAP11_NS) {
    throw new SoapClientError('Esperado um envelope SOAP 1.1 (http://schemas.xmlsoap.org/soap/envelope/).');
  }
  const soapBody = childElements(envelope).find((e) => e.localName === 'Body' && e.namespaceURI === SOAP11_NS);
  const operation = soapBody ? childElements(soapBody)[0] : undefined;
  if (!operation) throw new SoapClientError('SOAP Body vazio.');
  return { operation: operation.localName, namespace: operation.namespaceURI, element: operation };
}

/** The text of a string parameter (escaped or CDATA: the parser gives the same text), checking its namespace. */
export function stringParameter(element: Element, name: string, namespace: string | null): string {
  const found = childElements(element).find((e) => e.localName === name);
  if (!found) throw new SoapClientError(`Parâmetro <${name}> ausente em <${element.localName}>.`);
  if ((found.namespaceURI || null) !== namespace) {
    throw new SoapClientError(
      `Parâmetro <${name}> no namespace ${found.namespaceURI || '(nenhum)'}; esperado ${namespace ?? '(nenhum: não qualificado)'}.`,
    );
  }
  if (childElements(found).length > 0) throw new SoapClientError(`<${name}> deve ser uma string (escapada ou CDATA).`);
  return (found.textContent ?? '').replace(/^\s*<\?xml[^>]*\?>/, '').trim();
}

export function soapFault(status: number, code: 'soap:Client' | 'soap:Server', reason: string): SandboxReply {
  return {
    status,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body:
      `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP11_NS}"><soap:Body><soap:Fault>` +
      `<faultcode>${code}</faultcode><faultstring>${escapeXml(reason)}</faultstring></soap:Fault></soap:Body></soap:Envelope>`,
  };
}

/**
 * The kit's error replies of a SOAP 1.1 service, as SOAP faults: no such path (404 Client, `notFound` text), an error
 * (500 Server, its message), an injected fault (503 Server "Serviço indisponível").
 */
export function soapServiceReplies(notFound = 'Endpoint não encontrado') {
  return {
    notFound: () => soapFault(404, 'soap:Client', notFound),
    errorReply: (_req: unknown, err: Error) => soapFault(500, 'soap:Server', err.message),
    faults: { errorReply: () => soapFault(503, 'soap:Server', 'Serviço indisponível') },
  };
}

/** A SOAP 1.1 answer whose body is `content` (already XML) as the response element's children. */
export function soapAnswer(content: string): SandboxReply {
  return {
    status: 200,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP11_NS}"><soap:Body>${content}</soap:Body></soap:Envelope>`,
  };
}

/** Whether the Signature's SignedInfo and reference are canonicalized with exclusive C14N (with or without comments). */
export function usesExclusiveC14n(signature: Element): boolean {
  const isExc = (alg: string | null) => alg === EXC_C14N || alg === `${EXC_C14N}WithComments`;
  const method = at(signature, 'SignedInfo/CanonicalizationMethod')?.getAttribute('Algorithm') ?? null;
  const transforms = childElements(at(signature, 'SignedInfo/Reference/Transforms') ?? signature).filter(
    (t) => t.localName === 'Transform',
  );
  const c14nTransforms = transforms
    .map((t) => t.getAttribute('Algorithm'))
    .filter((a) => a !== 'http://www.w3.org/2000/09/xmldsig#enveloped-signature');
  return isExc(method) && c14nTransforms.length > 0 && c14nTransforms.every(isExc);
}

export function signatureOf(parent: Element): Element | null {
  return childElements(parent).find((e) => e.localName === 'Signature' && e.namespaceURI === XMLDSIG_NS) ?? null;
}

/** Verifies a whole-document signature (one Reference with `URI=""`), the Signature being a child of the root. */
export function verifyDocumentSignature(
  xml: string,
  root: Element,
): { ok: true; identity: IcpBrasilIdentity } | { ok: false; detail: string } {
  const signature = signatureOf(root);
  if (!signature) return { ok: false, detail: 'Assinatura ausente.' };
  const references = childElements(child(signature, 'SignedInfo') ?? signature).filter(
    (e) => e.localName === 'Reference',
  );
  if (references.length !== 1 || references[0].getAttribute('URI') !== '') {
    return { ok: false, detail: 'A assinatura deve ter uma única referência ao documento (URI="").' };
  }
  const certText = (at(signature, 'KeyInfo/X509Data/X509Certificate')?.textContent ?? '').replace(/\s+/g, '');
  if (!certText) return { ok: false, detail: 'KeyInfo sem X509Certificate.' };
  try {
    const pem = `-----BEGIN CERTIFICATE-----\n${certText}\n-----END CERTIFICATE-----\n`;
    const identity = readIcpBrasilIdentity(Buffer.from(certText, 'base64'));
    const verifier = new SignedXml({ publicCert: pem });
    verifier.loadSignature(new XMLSerializer().serializeToString(signature));
    if (!verifier.checkSignature(xml)) return { ok: false, detail: 'Valor de digest ou de assinatura não confere.' };
    return { ok: true, identity };
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  }
}

/** Validates a payload against an official schema; the errors joined, or null. */
export function schemaErrors(schema: Parameters<typeof validateXml>[0], xml: string): string | null {
  const result = validateXml(schema, xml);
  return result.ok ? null : result.errors.slice(0, 5).join(' | ');
}

export interface Mensagem {
  codigo: string;
  descricao: string;
  correcao?: string;
}

/** Taxpayer rules every DPS-taking municipal sandbox applies (no adherence rule: these cities are not adherent). */
export function dpsRuleErrors(dps: DpsData, env: Ambiente, now: Date, store: SefinStore): Mensagem[] {
  const errors: Mensagem[] = [];
  if (dps.tpAmb !== String(env))
    errors.push({ codigo: 'E0006', descricao: `tpAmb ${dps.tpAmb} enviado ao ambiente ${env}.` });
  const dhEmi = Date.parse(dps.dhEmi);
  if (Number.isNaN(dhEmi) || dhEmi > now.getTime()) {
    errors.push({ codigo: 'E0008', descricao: `dhEmi ${dps.dhEmi} posterior ao processamento.` });
  }
  const emitente = inscricaoOf(dps.emitter);
  if (emitente) {
    const previous = store.findByDpsNumber(env, dps.cLocEmi, emitente, stripZeros(dps.serie), stripZeros(dps.nDPS));
    if (previous) errors.push({ codigo: 'E0014', descricao: `DPS já processada: ${previous.idDps}.` });
  }
  return errors;
}

/** Issues the national-style NFS-e of an accepted DPS (`dpsRaw`: its `<DPS>` text, embedded unchanged). */
export function issueNfse(input: {
  env: Ambiente;
  at: Date;
  dps: DpsData;
  dpsRaw: string;
  store: SefinStore;
  signer: SandboxSigner;
  registeredName: string | null;
}): IssuedRecord {
  return issueNationalNfse({ ...input, verAplic: SANDBOX_APP_VERSION, defaultIssRate: 2 });
}

/** The element text of a document without its XML declaration. */
export function withoutDeclaration(xml: string): string {
  return xml.replace(/^\s*<\?xml[^>]*\?>/, '');
}

export { rootElementText };
