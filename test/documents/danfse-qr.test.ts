/**
 * The DANFSe's QR modules (src/documents/danfse/qr.ts chooses the mask itself, faster) are exactly those of the
 * `qrcode` package for the same text: national consultation URLs with random access keys, and texts of many
 * lengths and alphabets (numeric, alphanumeric, byte, mixed) so that every version band and every mask occurs.
 */
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { qrModules } from '../../src/documents/danfse/qr.ts';

function random(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

function texts(): string[] {
  const next = random(2024);
  const digits = (n: number) => Array.from({ length: n }, () => Math.floor(next() * 10)).join('');
  const out: string[] = [];
  for (let i = 0; i < 60; i++) out.push(`https://www.nfse.gov.br/ConsultaPublica/?tpc=1&chave=${digits(50)}`);
  const alphabets = ['0123456789', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 $%*+-./:', 'abcçãõé&?=/:.-_ ABC0123456789'];
  for (let i = 0; i < 90; i++) {
    const alphabet = alphabets[i % alphabets.length];
    const length = 1 + Math.floor(next() * 200);
    out.push(Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''));
  }
  return out;
}

describe('DANFSe QR modules', () => {
  it('equal the qrcode package’s, whichever mask it picks', () => {
    const masks = new Set<number>();
    for (const text of texts()) {
      const reference = QRCode.create(text, { errorCorrectionLevel: 'M' });
      const ours = qrModules(text);
      expect(ours.size, text).toBe(reference.modules.size);
      expect(Buffer.from(ours.data).equals(Buffer.from(reference.modules.data)), text).toBe(true);
      masks.add(reference.maskPattern as number);
    }
    expect([...masks].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
