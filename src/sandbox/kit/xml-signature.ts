import { type KeyObject, X509Certificate } from 'node:crypto';
import { XMLSerializer } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';
import { type IcpBrasilIdentity, readIcpBrasilIdentity } from './client-certificate.ts';
import { at, child, childElements, XMLDSIG_NS } from './xml-dom.ts';

/**
 * Signed requests and signed answers of the sandbox kit: its own XML-DSig code, on xml-crypto directly. It must not
 * share the service's signer, so that a bug there cannot hide behind the same bug here.
 */

export interface VerifiedSignature {
  certificate: X509Certificate;
  identity: IcpBrasilIdentity;
}

export type SignatureCheck =
  | { ok: true; value: VerifiedSignature }
  | { ok: false; reason: 'missing' | 'invalid' | 'certificate'; detail: string };

const RSA_ALGORITHMS = new Set([
  'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512',
]);

/**
 * Verifies the enveloped signature that follows `signed` inside `root` (`<root><signed Id=…/><Signature/></root>`):
 * a single Reference to `#Id`, an RSA algorithm, and the key of the X509Certificate in KeyInfo.
 * `documentReference`: a Reference `URI=""` is accepted too, over `root` taken as a document of its own (ISSNet signs
 * the Rps, the Pedido and the messages so, each before it is put in a larger message).
 */
export function verifyEnvelopedSignature(
  xml: string,
  root: Element,
  signed: Element,
  options: { documentReference?: boolean } = {},
): SignatureCheck {
  const signatures = childElements(root).filter((e) => e.localName === 'Signature' && e.namespaceURI === XMLDSIG_NS);
  if (signatures.length === 0) return { ok: false, reason: 'missing', detail: 'Assinatura ausente.' };
  if (signatures.length > 1) return { ok: false, reason: 'invalid', detail: 'Mais de uma assinatura.' };
  const signature = signatures[0];
  const id = signed.getAttribute('Id') || signed.getAttribute('id') || ''; // Betha: lowercase `id`

  const references = childElements(child(signature, 'SignedInfo') ?? signature).filter(
    (e) => e.localName === 'Reference',
  );
  const uri = references.length === 1 ? references[0].getAttribute('URI') : null;
  const wholeDocument = options.documentReference === true && uri === '';
  if (references.length !== 1 || (uri !== `#${id}` && !wholeDocument)) {
    return { ok: false, reason: 'invalid', detail: `A assinatura deve ter uma única referência a #${id}.` };
  }
  const algorithm = at(signature, 'SignedInfo/SignatureMethod')?.getAttribute('Algorithm') ?? '';
  if (!RSA_ALGORITHMS.has(algorithm)) {
    return { ok: false, reason: 'invalid', detail: `Algoritmo de assinatura não aceito: ${algorithm}.` };
  }
  const certText = (at(signature, 'KeyInfo/X509Data/X509Certificate')?.textContent ?? '').replace(/\s+/g, '');
  if (!certText) return { ok: false, reason: 'invalid', detail: 'KeyInfo sem X509Certificate.' };
  let certificate: X509Certificate;
  let identity: IcpBrasilIdentity;
  try {
    certificate = new X509Certificate(Buffer.from(certText, 'base64'));
    identity = readIcpBrasilIdentity(certificate.raw);
  } catch (err) {
    return { ok: false, reason: 'certificate', detail: `Certificado ilegível: ${(err as Error).message}` };
  }

  try {
    const verifier = new SignedXml({ publicCert: certificate.toString() });
    verifier.loadSignature(new XMLSerializer().serializeToString(signature));
    if (!verifier.checkSignature(wholeDocument ? new XMLSerializer().serializeToString(root) : xml)) {
      return { ok: false, reason: 'invalid', detail: 'Valor de digest ou de assinatura não confere.' };
    }
  } catch (err) {
    return { ok: false, reason: 'invalid', detail: (err as Error).message };
  }
  return { ok: true, value: { certificate, identity } };
}

export interface SandboxSigner {
  privateKey: KeyObject;
  certPem: string;
}

export interface SignatureProfile {
  signatureAlgorithm: string;
  digestAlgorithm: string;
  canonicalizationAlgorithm: string;
}

/** How Sefin Nacional signs what it issues (see the official sample). */
export const SEFIN_SIGNATURE_PROFILE: SignatureProfile = {
  signatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#WithComments',
};

/**
 * Signs `<root><element Id=…>…</element></root>` with an enveloped signature: `profile` (default: Sefin Nacional's,
 * RSA-SHA256, SHA-256 digest, exclusive C14N with comments), enveloped + C14N transforms, X509Certificate in KeyInfo,
 * the Signature as the last child of the root. The Signature is spliced into the original text, so everything
 * else (in particular an embedded, already signed request) stays byte for byte as received.
 */
export function signEnveloped(
  xml: string,
  target: { rootName: string; elementName: string },
  signer: SandboxSigner,
  profile: SignatureProfile = SEFIN_SIGNATURE_PROFILE,
): string {
  const { rootName, elementName } = target;
  const c14n = profile.canonicalizationAlgorithm;
  const sig = new SignedXml({
    privateKey: signer.privateKey,
    publicCert: signer.certPem,
    signatureAlgorithm: profile.signatureAlgorithm,
    canonicalizationAlgorithm: c14n,
  });
  const xpath = `/*[local-name(.)='${rootName}']/*[local-name(.)='${elementName}']`;
  sig.addReference({
    xpath,
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', c14n],
    digestAlgorithm: profile.digestAlgorithm,
  });
  sig.computeSignature(xml, { location: { reference: xpath, action: 'after' } });
  const closing = `</${rootName}>`;
  const end = xml.lastIndexOf(closing);
  if (end < 0) throw new Error(`signEnveloped: no ${closing}`);
  return xml.slice(0, end) + sig.getSignatureXml() + xml.slice(end);
}
