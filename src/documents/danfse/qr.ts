import QRCode from 'qrcode';

/**
 * The QR code of a DANFSe: the module matrix the `qrcode` package makes for the text at error correction level M,
 * with the mask chosen as that package chooses it, in a fraction of its time.
 *
 * `QRCode.create` spends most of its time choosing the mask: for each of the 8 patterns it masks the whole matrix
 * and scores it (rules N1–N4 of ISO/IEC 18004 §7.8.3, as the package implements them), through a method call per
 * module. Here the package encodes the text with mask 0 (no choice made), the mask is taken off again, and the
 * same scoring runs over the plain byte array; the winner (the first lowest score, as in the package) is applied
 * with its format information. test/documents/danfse-qr.test.ts checks the result against `QRCode.create` itself.
 */

export interface QrModules {
  size: number;
  /** Row-major, 1 for a dark module. */
  data: Uint8Array;
}

/** Mask condition of pattern `p` at (row i, column j): ISO/IEC 18004 table 10, as the package writes it. */
function masked(p: number, i: number, j: number): boolean {
  switch (p) {
    case 0:
      return (i + j) % 2 === 0;
    case 1:
      return i % 2 === 0;
    case 2:
      return j % 3 === 0;
    case 3:
      return (i + j) % 3 === 0;
    case 4:
      return (Math.floor(i / 2) + Math.floor(j / 3)) % 2 === 0;
    case 5:
      return ((i * j) % 2) + ((i * j) % 3) === 0;
    case 6:
      return (((i * j) % 2) + ((i * j) % 3)) % 2 === 0;
    default:
      return (((i * j) % 3) + ((i + j) % 2)) % 2 === 0;
  }
}

const G15 = 0b10100110111;
const G15_MASK = 0b101010000010010;
const bchDigit = (n: number) => (n === 0 ? 0 : 32 - Math.clz32(n));
/** Level M's two format bits are 00. */
const LEVEL_M = 0;

/** The 15 format bits (level M, mask `p`), BCH-protected and masked. */
function formatBits(p: number): number {
  const data = (LEVEL_M << 3) | p;
  let d = data << 10;
  while (bchDigit(d) - bchDigit(G15) >= 0) d ^= G15 << (bchDigit(d) - bchDigit(G15));
  return ((data << 10) | d) ^ G15_MASK;
}

/** Writes the format information of mask `p` where the package puts it (both copies and the dark module). */
function setFormat(m: Uint8Array, size: number, p: number): void {
  const bits = formatBits(p);
  for (let i = 0; i < 15; i++) {
    const mod = (bits >> i) & 1;
    if (i < 6) m[i * size + 8] = mod;
    else if (i < 8) m[(i + 1) * size + 8] = mod;
    else m[(size - 15 + i) * size + 8] = mod;
    if (i < 8) m[8 * size + size - i - 1] = mod;
    else if (i < 9) m[8 * size + 15 - i] = mod;
    else m[8 * size + 15 - i - 1] = mod;
  }
  m[(size - 8) * size + 8] = 1;
}

/** The package's penalty score (N1 + N2 + N3 + N4), on a row-major 0/1 array. */
function penalty(m: Uint8Array, size: number): number {
  let n1 = 0;
  let n3 = 0;
  for (let a = 0; a < size; a++) {
    let runRow = 0;
    let runCol = 0;
    let lastRow = -1;
    let lastCol = -1;
    let bitsRow = 0;
    let bitsCol = 0;
    for (let b = 0; b < size; b++) {
      const h = m[a * size + b];
      const v = m[b * size + a];
      if (h === lastRow) runRow++;
      else {
        if (runRow >= 5) n1 += 3 + (runRow - 5);
        lastRow = h;
        runRow = 1;
      }
      if (v === lastCol) runCol++;
      else {
        if (runCol >= 5) n1 += 3 + (runCol - 5);
        lastCol = v;
        runCol = 1;
      }
      bitsRow = ((bitsRow << 1) & 0x7ff) | h;
      bitsCol = ((bitsCol << 1) & 0x7ff) | v;
      if (b >= 10) {
        if (bitsRow === 0x5d0 || bitsRow === 0x05d) n3++;
        if (bitsCol === 0x5d0 || bitsCol === 0x05d) n3++;
      }
    }
    if (runRow >= 5) n1 += 3 + (runRow - 5);
    if (runCol >= 5) n1 += 3 + (runCol - 5);
  }
  let n2 = 0;
  for (let r = 0; r < size - 1; r++) {
    for (let c = 0; c < size - 1; c++) {
      const i = r * size + c;
      const sum = m[i] + m[i + 1] + m[i + size] + m[i + size + 1];
      if (sum === 4 || sum === 0) n2++;
    }
  }
  let dark = 0;
  for (let i = 0; i < m.length; i++) dark += m[i];
  const k = Math.abs(Math.ceil((dark * 100) / m.length / 5) - 10);
  return n1 + n2 * 3 + n3 * 40 + k * 10;
}

const masksBySize = new Map<number, Uint8Array[]>();

/** Each pattern's XOR over the data region (all but the reserved modules); the same for every symbol of a size. */
function masksFor(size: number, reserved: Uint8Array): Uint8Array[] {
  let masks = masksBySize.get(size);
  if (!masks) {
    masks = [];
    for (let p = 0; p < 8; p++) {
      const mask = new Uint8Array(size * size);
      for (let i = 0; i < size; i++)
        for (let j = 0; j < size; j++) if (!reserved[i * size + j] && masked(p, i, j)) mask[i * size + j] = 1;
      masks.push(mask);
    }
    masksBySize.set(size, masks);
  }
  return masks;
}

/** Same modules as `QRCode.create(text, { errorCorrectionLevel: 'M' }).modules`. */
export function qrModules(text: string): QrModules {
  const symbol = QRCode.create(text, { errorCorrectionLevel: 'M', maskPattern: 0 });
  const { size, data } = symbol.modules as unknown as { size: number; data: Uint8Array };
  const reserved = (symbol.modules as unknown as { reservedBit: Uint8Array }).reservedBit;
  const masks = masksFor(size, reserved);
  // The unmasked matrix: mask 0 taken off.
  const plain = new Uint8Array(size * size);
  for (let i = 0; i < plain.length; i++) plain[i] = data[i] ^ masks[0][i];
  let best = new Uint8Array(size * size);
  let candidate = new Uint8Array(size * size);
  let lowest = Number.POSITIVE_INFINITY;
  for (let p = 0; p < 8; p++) {
    const mask = masks[p];
    for (let i = 0; i < candidate.length; i++) candidate[i] = plain[i] ^ mask[i];
    setFormat(candidate, size, p);
    const score = penalty(candidate, size);
    if (score < lowest) {
      lowest = score;
      [best, candidate] = [candidate, best];
    }
  }
  return { size, data: best };
}
