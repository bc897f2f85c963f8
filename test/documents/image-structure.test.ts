import { describe, expect, it } from 'vitest';
import { checkImage, crc32, MAX_IMAGE_SIDE } from '../../src/documents/image-structure.ts';
import { pngChunk, tinyJpeg, WEBP_ALPHA, WEBP_ANIMATED, WEBP_LOSSLESS, WEBP_LOSSY } from '../support/images.ts';
import { tinyPng } from '../support/route-checks.ts';

/** The structural image decoder of logo uploads (issue 9, item 6): whole-file walks, dimensions from the headers. */

const VALID: [string, Buffer, string][] = [
  ['PNG', tinyPng(), 'png'],
  ['JPEG', tinyJpeg(), 'jpeg'],
  ['WebP lossy (VP8)', WEBP_LOSSY, 'webp'],
  ['WebP lossless (VP8L)', WEBP_LOSSLESS, 'webp'],
  ['WebP extended with alpha (VP8X)', WEBP_ALPHA, 'webp'],
];

function refused(bytes: Buffer, reason: RegExp) {
  const result = checkImage(bytes);
  expect(result.ok).toBe(false);
  if (!result.ok) expect(result.reason).toMatch(reason);
}

/** A PNG of the given size (IHDR rebuilt with its CRC) around the tiny PNG's image data. */
function pngWithSize(width: number, height: number): Buffer {
  const png = tinyPng();
  const ihdr = Buffer.from(png.subarray(16, 29));
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  return Buffer.concat([png.subarray(0, 8), pngChunk('IHDR', ihdr), png.subarray(33)]);
}

describe('checkImage', () => {
  it.each(VALID)('decodes a %s and reads its dimensions', (_name, bytes, format) => {
    expect(checkImage(bytes)).toEqual({ ok: true, format, width: 1, height: 1 });
  });

  it('reads the dimensions from the headers', () => {
    expect(checkImage(pngWithSize(400, 300))).toMatchObject({ ok: true, width: 400, height: 300 });
    const jpeg = tinyJpeg();
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    jpeg.writeUInt16BE(250, sof + 5); // height
    jpeg.writeUInt16BE(640, sof + 7); // width
    expect(checkImage(jpeg)).toMatchObject({ ok: true, format: 'jpeg', width: 640, height: 250 });
    const lossless = Buffer.from(WEBP_LOSSLESS);
    lossless.writeUInt32LE((lossless.readUInt32LE(21) & ~0xfffffff) | 199 | (99 << 14), 21);
    expect(checkImage(lossless)).toMatchObject({ ok: true, width: 200, height: 100 });
  });

  it.each(VALID)('refuses every truncation of a %s, and never throws', (_name, bytes) => {
    for (let length = 0; length < bytes.length; length++) {
      const result = checkImage(bytes.subarray(0, length));
      expect(result.ok, `${length} of ${bytes.length} bytes`).toBe(false);
    }
  });

  it.each(VALID)('refuses a %s with data after its end (polyglot)', (_name, bytes) => {
    for (const tail of ['<script>alert(1)</script>', 'PK\u0003\u0004zip', '\0']) {
      const result = checkImage(Buffer.concat([bytes, Buffer.from(tail, 'latin1')]));
      expect(result.ok, JSON.stringify(tail)).toBe(false);
    }
  });

  it('refuses a WebP whose RIFF size covers appended data that is not a chunk', () => {
    const polyglot = Buffer.concat([WEBP_LOSSY, Buffer.from('<?php ?>')]);
    polyglot.writeUInt32LE(polyglot.length - 8, 4);
    refused(polyglot, /chunk/);
  });

  it('refuses a PNG chunk whose CRC does not match, and a PNG without IHDR first or without image data', () => {
    const png = Buffer.from(tinyPng());
    png[20] = png[20]! ^ 1; // inside IHDR
    refused(png, /CRC/);
    const noIhdr = Buffer.concat([tinyPng().subarray(0, 8), tinyPng().subarray(33)]);
    refused(noIhdr, /IHDR/);
    const noIdat = Buffer.concat([tinyPng().subarray(0, 33), pngChunk('IEND', Buffer.alloc(0))]);
    refused(noIdat, /no image data/);
  });

  it('refuses empty and oversized dimensions (decompression bombs)', () => {
    refused(pngWithSize(0, 10), /no pixels/);
    refused(pngWithSize(MAX_IMAGE_SIDE + 1, 1), /at most/);
    refused(pngWithSize(9000, 9000), /too many pixels/);
  });

  it('refuses a JPEG without a frame header, or with a scan before it', () => {
    const jpeg = tinyJpeg();
    const sof = jpeg.indexOf(Buffer.from([0xff, 0xc0]));
    refused(Buffer.concat([jpeg.subarray(0, sof), jpeg.subarray(sof + 13)]), /before its frame header/);
    refused(Buffer.from('ffd8ffd9', 'hex'), /ends before its image data/);
  });

  it('refuses animated WebP and unknown formats', () => {
    refused(WEBP_ANIMATED, /animated/);
    refused(Buffer.from('GIF89a\u0001\u0000\u0001\u0000', 'latin1'), /not a PNG, JPEG or WebP/);
  });

  it('computes the PNG CRC-32 of the specification', () => {
    expect(crc32(Buffer.from('IEND', 'latin1'))).toBe(0xae426082);
    expect(crc32(Buffer.from('123456789', 'latin1'))).toBe(0xcbf43926);
  });
});
