import { hash, type KeyObject, sign } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import { type NamespaceScope, renderNamespaceDeclarations, scanCanonicalElement } from './canonical.ts';
import { escapeXmlAttr } from './escape.ts';
import { parseXmlDocument } from './read.ts';

export { escapeXmlAttr, escapeXmlText } from './escape.ts';

export type SignatureAlgorithm = 'rsa-sha1' | 'rsa-sha256';

export interface SigningKey {
  privateKey: KeyObject;
  certificatePem: string;
}

export interface SignOptions {
  /**
   * Local name of the element to sign, e.g. 'infDPS', 'infPedReg', 'InfDeclaracaoPrestacaoServico'. The first
   * element with that name (document order) is signed; its Id attribute is the reference (URI="#Id"). When omitted
   * the whole document is signed with URI="".
   */
  elementName?: string;
  key: SigningKey;
  /** Default 'rsa-sha1' (digest SHA-1); 'rsa-sha256' uses a SHA-256 digest. */
  algorithm?: SignatureAlgorithm;
  /**
   * Where the <Signature> goes: 'after-element' (default: next sibling of the signed element, inside its parent) or
   * 'root-end' (last child of the document element). Whole-document signatures and signatures of the document
   * element always go at the end of the document element.
   */
  placement?: 'after-element' | 'root-end';
  /**
   * 'inclusive' (default): C14N 1.0, as the national layout and ABRASF prescribe. 'exclusive': Exclusive C14N
   * (xml-exc-c14n#) for the SignedInfo and the reference, which some providers require (SIL/TBW refuses the
   * inclusive form); signed through xml-crypto.
   */
  canonicalization?: 'inclusive' | 'exclusive';
}

export const XMLDSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';
const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
const EXC_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const ENVELOPED = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';

interface AlgorithmProfile {
  hash: 'sha1' | 'sha256';
  signatureMethod: string;
  digestMethod: string;
}

const ALGORITHMS: Record<SignatureAlgorithm, AlgorithmProfile> = {
  'rsa-sha1': {
    hash: 'sha1',
    signatureMethod: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
    digestMethod: 'http://www.w3.org/2000/09/xmldsig#sha1',
  },
  'rsa-sha256': {
    hash: 'sha256',
    signatureMethod: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    digestMethod: 'http://www.w3.org/2001/04/xmlenc#sha256',
  },
};

const ELEMENT_NAME = /^[A-Za-z_][A-Za-z0-9._-]*$/;
const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----/;
const ID_ATTRIBUTES = ['Id', 'ID', 'id'];

/** The base64 body of the first certificate of a PEM text (the end-entity certificate), without headers or newlines. */
export function certificateBase64(pem: string): string {
  const match = PEM_CERTIFICATE.exec(pem);
  if (!match) throw new Error('certificateBase64: no "BEGIN CERTIFICATE" block in the PEM text');
  return match[1].replace(/\s+/g, '');
}

function profileOf(options: SignOptions): AlgorithmProfile {
  const profile = ALGORITHMS[options.algorithm ?? 'rsa-sha1'];
  if (!profile) throw new Error(`signXml: unknown algorithm ${String(options.algorithm)}`);
  if (options.elementName !== undefined && !ELEMENT_NAME.test(options.elementName)) {
    throw new Error(`signXml: invalid element name ${JSON.stringify(options.elementName)}`);
  }
  const { privateKey } = options.key;
  if (privateKey?.type !== 'private' || privateKey.asymmetricKeyType !== 'rsa') {
    throw new Error('signXml: key.privateKey must be an RSA private KeyObject (crypto.createPrivateKey)');
  }
  return profile;
}

function signedInfoContent(profile: AlgorithmProfile, uri: string, digestValue: string): string {
  return (
    `<CanonicalizationMethod Algorithm="${C14N}"></CanonicalizationMethod>` +
    `<SignatureMethod Algorithm="${profile.signatureMethod}"></SignatureMethod>` +
    `<Reference URI="${escapeXmlAttr(uri)}"><Transforms>` +
    `<Transform Algorithm="${ENVELOPED}"></Transform><Transform Algorithm="${C14N}"></Transform></Transforms>` +
    `<DigestMethod Algorithm="${profile.digestMethod}"></DigestMethod><DigestValue>${digestValue}</DigestValue>` +
    '</Reference></SignedInfo>'
  );
}

/**
 * Enveloped XMLDSig signature in the national profile: unprefixed `<Signature xmlns="…xmldsig#">`, inclusive C14N
 * 1.0, transforms enveloped-signature + C14N, RSA-SHA1/SHA-1 or RSA-SHA256/SHA-256, KeyInfo with the end-entity
 * X509Certificate only. Documents in canonical form (what our builders write) are signed straight from the string;
 * anything else goes through xml-crypto. An XML declaration, if present, stays at the top of the output.
 *
 * Throws (programmer errors) when the element is missing, has no Id attribute, or the key is not an RSA KeyObject.
 */
export function signXml(xml: string, options: SignOptions): string {
  const profile = profileOf(options);
  const certificate = certificateBase64(options.key.certificatePem);
  if (options.canonicalization === 'exclusive') return signWithXmlCrypto(xml, options, profile, certificate);
  const scan = scanCanonicalElement(xml, options.elementName);
  if (scan.kind === 'not-found') throw new Error(`signXml: no <${options.elementName}> element in the document`);
  if (scan.kind === 'unsupported') return signWithXmlCrypto(xml, options, profile, certificate);

  const element = scan.element;
  const wholeDocument = options.elementName === undefined;
  if (!wholeDocument && element.id === null) {
    throw new Error(`signXml: <${options.elementName}> has no Id attribute to reference`);
  }
  const atRootEnd = wholeDocument || element.isRoot || options.placement === 'root-end';
  const insertAt = atRootEnd ? element.rootEndIndex : element.afterElementIndex;
  const scope: NamespaceScope = atRootEnd ? element.rootScope : element.afterElementScope;
  const signatureScope = new Map(scope);
  signatureScope.set('', XMLDSIG_NS);
  const signedInfoNamespaces = renderNamespaceDeclarations(signatureScope);
  if (signedInfoNamespaces === null) return signWithXmlCrypto(xml, options, profile, certificate);

  const digestValue = hash(profile.hash, element.canonical, 'base64');
  const content = signedInfoContent(profile, wholeDocument ? '' : '#' + element.id, digestValue);
  const canonicalSignedInfo = Buffer.from('<SignedInfo' + signedInfoNamespaces + '>' + content, 'utf8');
  const signatureValue = sign(profile.hash, canonicalSignedInfo, options.key.privateKey).toString('base64');
  const signature =
    `<Signature xmlns="${XMLDSIG_NS}"><SignedInfo>${content}<SignatureValue>${signatureValue}</SignatureValue>` +
    `<KeyInfo><X509Data><X509Certificate>${certificate}</X509Certificate></X509Data></KeyInfo></Signature>`;
  return xml.slice(0, insertAt) + signature + xml.slice(insertAt);
}

/**
 * The generic path of `signXml` (same options, same signature profile): any well-formed XML, parsed and
 * canonicalized by xml-crypto. About 8 to 10 times slower; `signXml` uses it by itself whenever its fast path does not apply.
 */
export function signXmlGeneric(xml: string, options: SignOptions): string {
  const profile = profileOf(options);
  return signWithXmlCrypto(xml, options, profile, certificateBase64(options.key.certificatePem));
}

function parseStrict(xml: string): Document {
  return parseXmlDocument(xml, (level, message) => {
    if (level !== 'warning') throw new Error(`signXml: malformed XML: ${message}`);
  });
}

/**
 * xml-crypto 6.3 departs from C14N 1.0 in two cases that never occur in fiscal documents: it writes the data of a
 * processing instruction as text, and it does not copy xml:* attributes of ancestors onto the signed element. Its
 * signature would then fail in strict verifiers (xmlsec1, .NET, Java), so such documents are refused.
 */
function assertXmlCryptoCanonicalizes(target: Element): void {
  for (let node = target.parentNode; node && node.nodeType === 1; node = node.parentNode) {
    const attributes = (node as Element).attributes;
    for (let i = 0; i < attributes.length; i++) {
      if (attributes[i].prefix === 'xml') {
        throw new Error('signXml: cannot sign below an element with xml:* attributes (C14N would inherit them)');
      }
    }
  }
  const pending: Node[] = [target];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (node.nodeType === 7) throw new Error('signXml: cannot sign an element containing processing instructions');
    for (let child = node.firstChild; child; child = child.nextSibling) pending.push(child);
  }
}

function signWithXmlCrypto(xml: string, options: SignOptions, profile: AlgorithmProfile, certificate: string): string {
  const { elementName } = options;
  const wholeDocument = elementName === undefined;
  const doc = parseStrict(xml);
  const target = wholeDocument ? doc.documentElement : doc.getElementsByTagNameNS('*', elementName).item(0);
  if (!target) throw new Error(`signXml: no <${elementName ?? 'root'}> element in the document`);
  if (!wholeDocument && !ID_ATTRIBUTES.some((name) => target.hasAttribute(name))) {
    throw new Error(`signXml: <${elementName}> has no Id attribute to reference`);
  }
  assertXmlCryptoCanonicalizes(target);
  const isRoot = target === doc.documentElement;
  const c14n = options.canonicalization === 'exclusive' ? EXC_C14N : C14N;
  const signer = new SignedXml({
    privateKey: options.key.privateKey,
    publicCert: options.key.certificatePem,
    signatureAlgorithm: profile.signatureMethod,
    canonicalizationAlgorithm: c14n,
    getKeyInfoContent: () => `<X509Data><X509Certificate>${certificate}</X509Certificate></X509Data>`,
  });
  const xpath = wholeDocument ? '/*' : `(//*[local-name(.)='${elementName}'])[1]`;
  signer.addReference({
    xpath,
    transforms: [ENVELOPED, c14n],
    digestAlgorithm: profile.digestMethod,
    isEmptyUri: wholeDocument,
  });
  const atRootEnd = isRoot || options.placement === 'root-end';
  signer.computeSignature(xml, {
    location: atRootEnd ? { reference: '/*', action: 'append' } : { reference: xpath, action: 'after' },
  });
  return signer.getSignedXml();
}
