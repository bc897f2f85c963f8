import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { SignedXml as XmlCryptoVerifier } from 'xml-crypto';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { scanCanonicalElement } from '../../src/xml/canonical.ts';
import {
  certificateBase64,
  escapeXmlAttr,
  escapeXmlText,
  type SigningKey,
  signXml,
  signXmlGeneric,
} from '../../src/xml/sign.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { hasTool } from '../support/tools.ts';
import {
  createTestSigningKey,
  elementText,
  loadSampleDps,
  verifyWithXmlCrypto,
  verifyWithXmlsec1,
} from './fixtures.ts';

const XMLSEC1 = hasTool('xmlsec1');
const ALGORITHMS = ['rsa-sha1', 'rsa-sha256'] as const;
const SAMPLES = ['ibscbs_minimal.xml', 'ibscbs_with_retention.xml'];

let key: SigningKey;

beforeAll(() => {
  key = createTestSigningKey();
});

function expectXmlsec1(xml: string, idElement: string | undefined, ok: boolean): void {
  if (!XMLSEC1) return;
  const result = verifyWithXmlsec1(xml, key.certificatePem, idElement);
  expect(result.ok, result.output).toBe(ok);
}

describe('signXml on the official sample DPS', () => {
  for (const file of SAMPLES) {
    for (const algorithm of ALGORITHMS) {
      it(`${file} with ${algorithm}: XSD-valid, verified by xml-crypto and xmlsec1, tampering detected`, () => {
        const dps = loadSampleDps(file);
        expect(scanCanonicalElement(dps, 'infDPS').kind).toBe('found');
        const signed = signXml(dps, { elementName: 'infDPS', key, algorithm });

        // Signature is the next sibling of infDPS, unprefixed, in canonical form, end certificate only.
        expect(
          signed.startsWith(
            dps.slice(0, dps.indexOf('</infDPS>') + 9) +
              '<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>',
          ),
        ).toBe(true);
        expect(signed.endsWith('</Signature></DPS>')).toBe(true);
        expect(signed).not.toMatch(/>\s+</);
        expect(signed).not.toContain('ds:');
        expect(signed.match(/<X509Certificate>/g)).toHaveLength(1);
        expect(elementText(signed, 'X509Certificate')).toBe(certificateBase64(key.certificatePem));
        const id = /<infDPS Id="([^"]+)"/.exec(dps)![1];
        expect(signed).toContain(`<Reference URI="#${id}">`);
        const sha256 = algorithm === 'rsa-sha256';
        expect(signed).toContain(
          sha256
            ? '<SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256">'
            : '<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1">',
        );
        expect(signed).toContain(
          sha256
            ? '<DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256">'
            : '<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1">',
        );
        expect(Buffer.from(elementText(signed, 'DigestValue')!, 'base64')).toHaveLength(sha256 ? 32 : 20);

        expect(validateXml('DPS', signed)).toEqual({ ok: true });
        const verified = verifyWithXmlCrypto(signed, key.certificatePem);
        expect(verified.ok, verified.error).toBe(true);
        expectXmlsec1(signed, 'infDPS', true);

        const tampered = signed.replace(/<vServ>([0-9.]+)<\/vServ>/, (_m, v: string) => `<vServ>${v}1</vServ>`);
        expect(tampered).not.toBe(signed);
        expect(verifyWithXmlCrypto(tampered, key.certificatePem).ok).toBe(false);
        expectXmlsec1(tampered, 'infDPS', false);

        const forgedSignatureValue = signed.replace(
          /<SignatureValue>(.)/,
          (_m, c: string) => `<SignatureValue>${c === 'A' ? 'B' : 'A'}`,
        );
        expect(verifyWithXmlCrypto(forgedSignatureValue, key.certificatePem).ok).toBe(false);
        expectXmlsec1(forgedSignatureValue, 'infDPS', false);
      });
    }
  }

  it('computes the same digest and signature value as the xml-crypto path (RSA PKCS#1 v1.5 is deterministic)', () => {
    for (const file of SAMPLES) {
      for (const algorithm of ALGORITHMS) {
        const dps = loadSampleDps(file);
        const fast = signXml(dps, { elementName: 'infDPS', key, algorithm });
        const generic = signXmlGeneric(dps, { elementName: 'infDPS', key, algorithm });
        expect(fast).not.toBe(generic); // xmldom writes empty elements as <x/>, so the two texts differ...
        expect(elementText(fast, 'DigestValue')).toBe(elementText(generic, 'DigestValue')); // ...their digests do not
        expect(elementText(fast, 'SignatureValue')).toBe(elementText(generic, 'SignatureValue'));
      }
    }
  });

  it('rejects a signature made by another key (xmlsec1 trusts only the given certificate)', () => {
    const other = createTestSigningKey('OUTRA EMPRESA LTDA:99888777000166');
    const signed = signXml(loadSampleDps('ibscbs_minimal.xml'), { elementName: 'infDPS', key: other });
    expect(verifyWithXmlCrypto(signed, key.certificatePem).ok).toBe(false);
    expectXmlsec1(signed, 'infDPS', false);
  });
});

describe('signXml document forms and placement', () => {
  const dps = () => loadSampleDps('ibscbs_minimal.xml');

  it('keeps an XML declaration at the top and stays on the fast path', () => {
    const declaration = '<?xml version="1.0" encoding="UTF-8"?>';
    const input = declaration + dps();
    expect(scanCanonicalElement(input, 'infDPS').kind).toBe('found');
    const signed = signXml(input, { elementName: 'infDPS', key });
    expect(signed.startsWith(declaration + '<DPS ')).toBe(true);
    expect(signed.match(/<\?xml/g)).toHaveLength(1);
    expect(elementText(signed, 'SignatureValue')).toBe(
      elementText(signXml(dps(), { elementName: 'infDPS', key }), 'SignatureValue'),
    );
    expect(validateXml('DPS', signed)).toEqual({ ok: true });
    expectXmlsec1(signed, 'infDPS', true);
  });

  it('falls back to xml-crypto for a pretty-printed document with a comment, and the result verifies', () => {
    const pretty =
      '<?xml version="1.0" encoding="UTF-8"?>\n<!-- gerado à mão -->\n' +
      dps().replace('<infDPS ', '\n  <infDPS ').replace('<tpAmb>', '\n    <!-- ambiente -->\n    <tpAmb>');
    expect(scanCanonicalElement(pretty, 'infDPS')).toEqual({ kind: 'unsupported', reason: 'comment' });
    const signed = signXml(pretty, { elementName: 'infDPS', key, algorithm: 'rsa-sha256' });
    expect(signed.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(verifyWithXmlCrypto(signed, key.certificatePem).ok).toBe(true);
    expectXmlsec1(signed, 'infDPS', true);
  });

  it("places the signature at the end of the root with placement 'root-end'", () => {
    const xml =
      '<Envio xmlns="urn:example:envio" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><Lote>' +
      '<Pedido Id="P1"><Valor>10.00</Valor></Pedido></Lote><Extra>x</Extra></Envio>';
    const after = signXml(xml, { elementName: 'Pedido', key });
    expect(after).toMatch(
      /<\/Pedido><Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#">.*<\/Signature><\/Lote>/,
    );
    const atEnd = signXml(xml, { elementName: 'Pedido', key, placement: 'root-end' });
    expect(atEnd).toMatch(
      /<\/Extra><Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#">.*<\/Signature><\/Envio>$/,
    );
    for (const signed of [after, atEnd]) {
      expect(verifyWithXmlCrypto(signed, key.certificatePem).ok).toBe(true);
      expectXmlsec1(signed, 'Pedido', true);
      // Same digest: the reference does not depend on where the signature goes...
      expect(elementText(signed, 'DigestValue')).toBe(elementText(after, 'DigestValue'));
    }
    // ...and xml-crypto's generic path agrees on both SignedInfo contexts (the xsi namespace is in scope).
    expect(elementText(signXmlGeneric(xml, { elementName: 'Pedido', key }), 'SignatureValue')).toBe(
      elementText(after, 'SignatureValue'),
    );
    expect(
      elementText(signXmlGeneric(xml, { elementName: 'Pedido', key, placement: 'root-end' }), 'SignatureValue'),
    ).toBe(elementText(atEnd, 'SignatureValue'));
  });

  it('signs the whole document with URI="" and an enveloped signature', () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><Lote xmlns="urn:example:lote" versao="1"><Item>a &amp; b</Item></Lote>';
    const signed = signXml(xml, { key, algorithm: 'rsa-sha256' });
    expect(signed).toContain('<Reference URI="">');
    expect(signed.endsWith('</Signature></Lote>')).toBe(true);
    expect(verifyWithXmlCrypto(signed, key.certificatePem).ok).toBe(true);
    expectXmlsec1(signed, undefined, true);
    expect(elementText(signXmlGeneric(xml, { key, algorithm: 'rsa-sha256' }), 'SignatureValue')).toBe(
      elementText(signed, 'SignatureValue'),
    );
    const tampered = signed.replace('a &amp; b', 'a &amp; c');
    expect(verifyWithXmlCrypto(tampered, key.certificatePem).ok).toBe(false);
    expectXmlsec1(tampered, undefined, false);
  });

  it('signs a batch that contains RPS signed beforehand with the same namespace, all signatures verify', () => {
    const ns = 'http://www.abrasf.org.br/nfse.xsd';
    const signedRps = (n: number) =>
      signXml(
        `<Rps xmlns="${ns}"><InfDeclaracaoPrestacaoServico Id="R${n}"><Competencia>2026-08-01</Competencia>` +
          `<Valor>${n}.00</Valor></InfDeclaracaoPrestacaoServico></Rps>`,
        { elementName: 'InfDeclaracaoPrestacaoServico', key },
      );
    expect(signedRps(1)).toMatch(
      /<\/InfDeclaracaoPrestacaoServico><Signature xmlns="[^"]+"><SignedInfo>.*<\/Signature><\/Rps>$/,
    );
    // Embedded as is, each Rps keeps a redundant xmlns: not canonical, so the batch goes through xml-crypto.
    const withRedundant = `<EnviarLoteRpsEnvio xmlns="${ns}"><LoteRps Id="L1" versao="2.04"><ListaRps>${signedRps(1)}${signedRps(2)}</ListaRps></LoteRps></EnviarLoteRpsEnvio>`;
    expect(scanCanonicalElement(withRedundant, 'LoteRps')).toEqual({
      kind: 'unsupported',
      reason: 'redundant namespace declaration',
    });
    // Without it (what a builder writes), the batch, signatures included, is canonical: fast path.
    const canonical = withRedundant.replaceAll(`<Rps xmlns="${ns}">`, '<Rps>');
    expect(scanCanonicalElement(canonical, 'LoteRps').kind).toBe('found');
    for (const batch of [withRedundant, canonical]) {
      const signed = signXml(batch, { elementName: 'LoteRps', key });
      expect(signed.endsWith('</Signature></EnviarLoteRpsEnvio>')).toBe(true);
      for (const index of [0, 1, 2]) {
        const result = verifyWithXmlCrypto(signed, key.certificatePem, index);
        expect(result.ok, `signature ${index}: ${result.error}`).toBe(true);
      }
      const lote = verifyWithXmlCrypto(signed, key.certificatePem, 2);
      expect(lote.references[0]).toContain('<Signature xmlns="http://www.w3.org/2000/09/xmldsig#">');
      expectXmlsec1(signed, 'InfDeclaracaoPrestacaoServico', true);
    }
  });

  it('signs elements in place inside a namespaced batch, and every signature verifies', () => {
    let xml =
      '<EnviarLoteRpsEnvio xmlns="http://www.abrasf.org.br/nfse.xsd"><LoteRps Id="L1" versao="2.04"><ListaRps>' +
      '<Rps><InfDeclaracaoPrestacaoServico Id="R1"><Valor>1.00</Valor></InfDeclaracaoPrestacaoServico></Rps>' +
      '</ListaRps></LoteRps></EnviarLoteRpsEnvio>';
    xml = signXml(xml, { elementName: 'InfDeclaracaoPrestacaoServico', key });
    xml = signXml(xml, { elementName: 'LoteRps', key, algorithm: 'rsa-sha256' });
    expect(xml.match(/<Signature /g)).toHaveLength(2);
    expect(verifyWithXmlCrypto(xml, key.certificatePem, 0).ok).toBe(true);
    expect(verifyWithXmlCrypto(xml, key.certificatePem, 1).ok).toBe(true);
    expectXmlsec1(xml, 'InfDeclaracaoPrestacaoServico', true); // xmlsec1 checks the first signature
  });

  it('throws programmer errors: missing element, missing Id, invalid key, invalid certificate', () => {
    const xml = dps();
    expect(() => signXml(xml, { elementName: 'infPedReg', key })).toThrow(/no <infPedReg>/);
    expect(() => signXml('<a><b>1</b></a>', { elementName: 'b', key })).toThrow(/no Id attribute/);
    expect(() => signXml('<a><!-- x --><b>1</b></a>', { elementName: 'b', key })).toThrow(/no Id attribute/);
    expect(() => signXml('<a><!-- x --><b>1</b></a>', { elementName: 'c', key })).toThrow(/no <c>/);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(() => signXml(xml, { elementName: 'infDPS', key: { ...key, privateKey: ec } })).toThrow(
      /RSA private KeyObject/,
    );
    const publicKey = createPublicKey(key.privateKey);
    expect(() =>
      signXml(xml, { elementName: 'infDPS', key: { privateKey: publicKey, certificatePem: key.certificatePem } }),
    ).toThrow(/RSA private KeyObject/);
    expect(() => signXml(xml, { elementName: 'infDPS', key: { ...key, certificatePem: 'MIIB...' } })).toThrow(
      /BEGIN CERTIFICATE/,
    );
    expect(() => signXml(xml, { elementName: "x']|//*[1", key })).toThrow(/invalid element name/);
  });
});

describe('helpers', () => {
  it('escapes text and attributes in C14N form', () => {
    expect(escapeXmlText('a & b < c > d "e" \'f\'\r\n\t')).toBe('a &amp; b &lt; c &gt; d "e" \'f\'&#xD;\n\t');
    expect(escapeXmlAttr('a & b < c > d "e" \'f\'\r\n\t')).toBe(
      "a &amp; b &lt; c > d &quot;e&quot; 'f'&#xD;&#xA;&#x9;",
    );
    expect(escapeXmlText('ok\u0000\u0008\u000B\u001Fok\uFFFE')).toBe('okok');
    expect(escapeXmlText('Serviço técnico 😀')).toBe('Serviço técnico 😀');
  });

  it('extracts the first certificate of a PEM chain without headers or newlines', () => {
    const body = certificateBase64(key.certificatePem);
    expect(body).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(body, 'base64')[0]).toBe(0x30);
    const chain = `${key.certificatePem}\n${createTestSigningKey('AC TESTE').certificatePem}`;
    expect(certificateBase64(chain)).toBe(body);
  });
});

describe('exclusive canonicalization (providers that refuse C14N 1.0)', () => {
  it('signs with xml-exc-c14n# in SignedInfo and the reference, and the signature verifies', () => {
    const files = createA1Certificate({ cnpj: '11222333000181', name: 'EMPRESA', password: 'x' });
    const read = readPkcs12(files.pfx, files.password);
    if (!read.ok) throw new Error(read.error.message);
    const xml =
      '<NFSe xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infNFSe Id="NFS1"><a>1</a></infNFSe></NFSe>';
    const signed = signXml(xml, {
      elementName: 'infNFSe',
      key: { privateKey: read.value.privateKey, certificatePem: read.value.certPem },
      canonicalization: 'exclusive',
    });
    expect(signed.match(/xml-exc-c14n#/g)?.length).toBe(2);
    expect(signed).not.toContain('REC-xml-c14n-20010315');
    const verifier = new XmlCryptoVerifier({ publicCert: read.value.certPem });
    verifier.loadSignature(/<Signature[\s\S]*<\/Signature>/.exec(signed)![0]);
    expect(verifier.checkSignature(signed)).toBe(true);
  });
});
