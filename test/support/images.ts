import { crc32 } from '../../src/documents/image-structure.ts';
import { tinyPng } from './route-checks.ts';

/**
 * Small, real images for the logo tests (no image tool needed): a baseline JPEG built marker by marker (1x1
 * grey, one Huffman code per table), and the 1x1 WebP files browsers use for feature detection (lossy VP8,
 * lossless VP8L, VP8X with alpha, animated).
 */
export function tinyJpeg(): Buffer {
  const hex = [
    'ffd8',
    'ffe000104a46494600010100000100010000', // APP0 JFIF
    `ffdb004300${'01'.repeat(64)}`, // DQT: table 0, all ones
    'ffc0000b080001000101011100', // SOF0: 8 bits, 1x1, one component (id 1, 1x1 sampling, table 0)
    `ffc4001400${'01'}${'00'.repeat(15)}00`, // DHT DC 0: one code of length 1 → category 0
    `ffc4001410${'01'}${'00'.repeat(15)}00`, // DHT AC 0: one code of length 1 → EOB
    'ffda000801010000003f00', // SOS: one component, spectral 0..63
    '3f', // DC diff 0 ('0'), EOB ('0'), padded with ones
    'ffd9',
  ];
  return Buffer.from(hex.join(''), 'hex');
}

export const WEBP_LOSSY = Buffer.from('UklGRiIAAABXRUJQVlA4IBYAAAAwAQCdASoBAAEADsD+JaQAA3AAAAAA', 'base64');
export const WEBP_LOSSLESS = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');
export const WEBP_ALPHA = Buffer.from(
  'UklGRkoAAABXRUJQVlA4WAoAAAAQAAAAAAAAAAAAQUxQSAwAAAARBxAR/Q9ERP8DAABWUDggGAAAABQBAJ0BKgEAAQAAAP4AAA3AAP7mtQAAAA==',
  'base64',
);
export const WEBP_ANIMATED = Buffer.from(
  'UklGRlIAAABXRUJQVlA4WAoAAAASAAAAAAAAAAAAQU5JTQYAAAD/////AABBTk1GJgAAAAAAAAAAAAAAAAAAAGQAAABWUDhMDQAAAC8AAAAQBxAREYiI/gcA',
  'base64',
);

/** A PNG chunk with its length and CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** {@link tinyPng} grown to exactly `total` bytes by a tEXt comment before IEND (a valid PNG of that size). */
export function pngOfSize(total: number): Buffer {
  const png = tinyPng();
  const iend = png.length - 12;
  const filler = total - png.length - 12;
  const text = Buffer.concat([Buffer.from('Comment\0', 'latin1'), Buffer.alloc(filler - 8, 0x20)]);
  return Buffer.concat([png.subarray(0, iend), pngChunk('tEXt', text), png.subarray(iend)]);
}
