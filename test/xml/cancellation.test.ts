import { DOMParser } from '@xmldom/xmldom';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  buildCancellationRequest,
  type CancellationRequestInput,
  DEFAULT_CANCELLATION_REASON,
  normalizeCancellationReason,
} from '../../src/engines/national/event-builder.ts';
import { scanCanonicalElement } from '../../src/xml/canonical.ts';
import { formatDateTimeWithOffset } from '../../src/xml/datetime.ts';
import { type SigningKey, signXml } from '../../src/xml/sign.ts';
import { gunzipBase64, gzipBase64 } from '../../src/xml/transport-encoding.ts';
import { validateXml } from '../../src/xml/xsd.ts';
import { hasTool } from '../support/tools.ts';
import { createTestSigningKey, verifyWithXmlCrypto, verifyWithXmlsec1 } from './fixtures.ts';

const CHAVE = '33045572211905971000105000000000014625124504258429';
const BASE: CancellationRequestInput = {
  chaveAcesso: CHAVE,
  tpAmb: 2,
  author: { cnpj: '11222333000181' },
  dhEvento: new Date('2026-08-18T17:30:00Z'),
  verAplic: 'nfse-service-0.1',
};

function xMotivoOf(xml: string): string {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  return doc.getElementsByTagName('xMotivo').item(0)!.textContent!;
}

describe('buildCancellationRequest', () => {
  let key: SigningKey;
  beforeAll(() => {
    key = createTestSigningKey();
  });

  it('writes the exact e101101 layout with the 59-character Id', () => {
    const { xml, id } = buildCancellationRequest({ ...BASE, motivo: 'Serviço não prestado ao tomador', cMotivo: 2 });
    expect(id).toBe(`PRE${CHAVE}101101`);
    expect(id).toHaveLength(59);
    expect(xml).toBe(
      '<pedRegEvento xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01">' +
        `<infPedReg Id="PRE${CHAVE}101101"><tpAmb>2</tpAmb><verAplic>nfse-service-0.1</verAplic>` +
        `<dhEvento>2026-08-18T14:30:00-03:00</dhEvento><CNPJAutor>11222333000181</CNPJAutor><chNFSe>${CHAVE}</chNFSe>` +
        '<e101101><xDesc>Cancelamento de NFS-e</xDesc><cMotivo>2</cMotivo>' +
        '<xMotivo>Serviço não prestado ao tomador</xMotivo></e101101></infPedReg></pedRegEvento>',
    );
    expect(validateXml('pedRegEvento', xml)).toEqual({ ok: true });
    expect(scanCanonicalElement(xml, 'infPedReg').kind).toBe('found');
  });

  it('uses CPFAutor, the given offset, and cMotivo 9 by default', () => {
    const { xml } = buildCancellationRequest({
      ...BASE,
      tpAmb: 1,
      author: { cpf: '12345678909' },
      utcOffsetMinutes: -240,
    });
    expect(xml).toContain('<tpAmb>1</tpAmb>');
    expect(xml).toContain('<dhEvento>2026-08-18T13:30:00-04:00</dhEvento><CPFAutor>12345678909</CPFAutor>');
    expect(xml).toContain('<cMotivo>9</cMotivo>');
    expect(validateXml('pedRegEvento', xml)).toEqual({ ok: true });
  });

  const exactly255 = `Valor & alíquota < devidos > informados ${'x'.repeat(255)}`.slice(0, 255);
  const reasons: [string, string | null | undefined, string][] = [
    ['missing', undefined, DEFAULT_CANCELLATION_REASON],
    ['null', null, DEFAULT_CANCELLATION_REASON],
    ['blank', ' \n\t ', DEFAULT_CANCELLATION_REASON],
    ['short', ' Duplicada ', 'Duplicada - cancelamento solicitado pelo emitente'],
    ['exactly 255 with & < >', exactly255, exactly255],
    ['over 255', 'y'.repeat(300), 'y'.repeat(255)],
    ['with & < > and quotes', 'Valor R$ 10 < R$ 20 & "taxa" > 0', 'Valor R$ 10 < R$ 20 & "taxa" > 0'],
    [
      'multi-line, typographic, outside Latin-1',
      'Nota emitida em duplicidade —\r\n“pedido” 42… 😀 Łódź',
      'Nota emitida em duplicidade - "pedido" 42... Lódz',
    ],
  ];

  for (const [label, motivo, expected] of reasons) {
    it(`motivo ${label}: 15..255 characters, XSD-valid, signature verified by xmlsec1 and xml-crypto`, () => {
      expect(normalizeCancellationReason(motivo)).toBe(expected);
      const { xml, id } = buildCancellationRequest({ ...BASE, motivo });
      const sent = xMotivoOf(xml);
      expect(sent).toBe(expected);
      expect(sent.length).toBeGreaterThanOrEqual(15);
      expect(sent.length).toBeLessThanOrEqual(255);
      expect(validateXml('pedRegEvento', xml)).toEqual({ ok: true });
      expect(scanCanonicalElement(xml, 'infPedReg').kind).toBe('found');

      for (const algorithm of ['rsa-sha1', 'rsa-sha256'] as const) {
        const signed = signXml(xml, { elementName: 'infPedReg', key, algorithm });
        expect(signed).toContain(`<Reference URI="#${id}">`);
        expect(signed).toMatch(
          /<\/infPedReg><Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#">.*<\/Signature><\/pedRegEvento>$/,
        );
        const schema = validateXml('pedRegEvento', signed);
        expect(schema, JSON.stringify(schema)).toEqual({ ok: true });
        expect(verifyWithXmlCrypto(signed, key.certificatePem).ok).toBe(true);
        if (hasTool('xmlsec1')) {
          const result = verifyWithXmlsec1(signed, key.certificatePem, 'infPedReg');
          expect(result.ok, result.output).toBe(true);
          const tampered = signed.replace('<cMotivo>9</cMotivo>', '<cMotivo>1</cMotivo>');
          expect(verifyWithXmlsec1(tampered, key.certificatePem, 'infPedReg').ok).toBe(false);
          expect(verifyWithXmlCrypto(tampered, key.certificatePem).ok).toBe(false);
        }
      }
    });
  }

  it('throws on programmer errors', () => {
    expect(() => buildCancellationRequest({ ...BASE, chaveAcesso: CHAVE.slice(1) })).toThrow(/chaveAcesso/);
    expect(() => buildCancellationRequest({ ...BASE, author: { cnpj: '11.222.333/0001-81' } })).toThrow(/cnpj/);
    expect(() => buildCancellationRequest({ ...BASE, author: { cpf: '123' } })).toThrow(/cpf/);
    expect(() => buildCancellationRequest({ ...BASE, verAplic: '' })).toThrow(/verAplic/);
    expect(() => buildCancellationRequest({ ...BASE, verAplic: 'x'.repeat(21) })).toThrow(/verAplic/);
    expect(() => buildCancellationRequest({ ...BASE, tpAmb: 3 as 1 })).toThrow(/tpAmb/);
    expect(() => buildCancellationRequest({ ...BASE, cMotivo: 3 as 1 })).toThrow(/cMotivo/);
    expect(() => buildCancellationRequest({ ...BASE, dhEvento: new Date('x') })).toThrow(/invalid date/);
  });
});

describe('formatDateTimeWithOffset', () => {
  it('writes AAAA-MM-DDThh:mm:ss±hh:mm for the same instant, without fractions', () => {
    const instant = new Date('2026-01-01T01:02:03.999Z');
    expect(formatDateTimeWithOffset(instant, -180)).toBe('2025-12-31T22:02:03-03:00');
    expect(formatDateTimeWithOffset(instant, 0)).toBe('2026-01-01T01:02:03+00:00');
    expect(formatDateTimeWithOffset(instant, 60)).toBe('2026-01-01T02:02:03+01:00');
    expect(formatDateTimeWithOffset(instant, -210)).toBe('2025-12-31T21:32:03-03:30');
    expect(formatDateTimeWithOffset(new Date('2028-02-29T12:00:00Z'), -120)).toBe('2028-02-29T10:00:00-02:00');
    expect(() => formatDateTimeWithOffset(instant, 1.5)).toThrow(/offset/);
    expect(() => formatDateTimeWithOffset(instant, -900)).toThrow(/offset/);
  });
});

describe('gzipBase64', () => {
  it('round-trips UTF-8 XML through GZip + Base64', () => {
    const xml = buildCancellationRequest({ ...BASE, motivo: 'Serviço não prestado – “ação” ✓' }).xml;
    const encoded = gzipBase64(xml);
    expect(encoded).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(encoded, 'base64').subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(gunzipBase64(encoded)).toBe(xml);
    expect(() => gunzipBase64(Buffer.from('not gzip').toString('base64'))).toThrow();
  });
});
