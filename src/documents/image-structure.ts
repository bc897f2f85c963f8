/**
 * Structural decoding of the logo formats (PNG, JPEG, WebP), without a dependency: the whole file is walked (PNG
 * chunks with their CRCs, JPEG markers and entropy-coded segments, WebP RIFF chunks) and the dimensions are read
 * from the image header (IHDR, SOFn, VP8/VP8L/VP8X). A file that is truncated, carries bytes after its end
 * (a polyglot: an image that is also a ZIP, HTML, a script…) or whose header is inconsistent is refused. Pixel
 * data is not decompressed (the renderer does that); this is what the upload checks before storing anything.
 */
export type ImageFormat = 'png' | 'jpeg' | 'webp';

export type ImageCheck =
  | { ok: true; format: ImageFormat; width: number; height: number }
  | { ok: false; reason: string };

/** Largest side accepted, and largest pixel count (a 500 KB file may claim a decompression bomb's size). */
export const MAX_IMAGE_SIDE = 10_000;
export const MAX_IMAGE_PIXELS = 40_000_000;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function sniffImageFormat(bytes: Buffer): ImageFormat | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') {
    return 'webp';
  }
  return null;
}

/** Decodes the structure of a PNG, JPEG or WebP file and reads its dimensions. */
export function checkImage(bytes: Buffer): ImageCheck {
  const format = sniffImageFormat(bytes);
  if (!format) return fail('not a PNG, JPEG or WebP image');
  const result = format === 'png' ? checkPng(bytes) : format === 'jpeg' ? checkJpeg(bytes) : checkWebp(bytes);
  if (!result.ok) return result;
  if (result.width < 1 || result.height < 1) return fail('the image has no pixels');
  if (result.width > MAX_IMAGE_SIDE || result.height > MAX_IMAGE_SIDE) {
    return fail(`the image is ${result.width}x${result.height} px; at most ${MAX_IMAGE_SIDE} px a side`);
  }
  if (result.width * result.height > MAX_IMAGE_PIXELS) return fail('the image has too many pixels');
  return result;
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

// ---- PNG (ISO/IEC 15948): signature, IHDR first, at least one IDAT, IEND last, a CRC on every chunk

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32(bytes: Buffer, start = 0, end = bytes.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Valid bit depths per PNG colour type. */
const PNG_DEPTHS: Record<number, number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

function checkPng(b: Buffer): ImageCheck {
  let at = 8;
  let width = 0;
  let height = 0;
  let index = 0;
  let sawIdat = false;
  let idatEnded = false;
  let colorType = -1;
  let sawPalette = false;
  for (;;) {
    if (at + 12 > b.length) return fail('the PNG is truncated (no IEND chunk)');
    const length = b.readUInt32BE(at);
    const type = b.toString('latin1', at + 4, at + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) return fail(`the PNG has an invalid chunk type at byte ${at}`);
    if (length > 0x7fffffff || at + 12 + length > b.length) return fail(`the PNG chunk ${type} is truncated`);
    const dataStart = at + 8;
    const crc = b.readUInt32BE(dataStart + length);
    if (crc32(b, at + 4, dataStart + length) !== crc) return fail(`the PNG chunk ${type} fails its CRC`);
    if (index === 0) {
      if (type !== 'IHDR' || length !== 13) return fail('the PNG does not start with an IHDR header');
      width = b.readUInt32BE(dataStart);
      height = b.readUInt32BE(dataStart + 4);
      const depth = b[dataStart + 8]!;
      colorType = b[dataStart + 9]!;
      if (!PNG_DEPTHS[colorType]?.includes(depth)) return fail('the PNG header has an invalid colour type or depth');
      if (b[dataStart + 10] !== 0 || b[dataStart + 11] !== 0 || b[dataStart + 12]! > 1) {
        return fail('the PNG header has an invalid compression, filter or interlace method');
      }
    } else if (type === 'IHDR') {
      return fail('the PNG has a second IHDR');
    } else if (type === 'PLTE') {
      sawPalette = true;
    } else if (type === 'IDAT') {
      if (idatEnded) return fail('the PNG image data is not contiguous');
      sawIdat = true;
    } else if (type === 'IEND') {
      if (length !== 0) return fail('the PNG IEND chunk is not empty');
      if (!sawIdat) return fail('the PNG has no image data');
      if (colorType === 3 && !sawPalette) return fail('the palette PNG has no palette');
      if (dataStart + 4 !== b.length) return fail('the PNG has data after its end (IEND)');
      return { ok: true, format: 'png', width, height };
    } else if (sawIdat) {
      idatEnded = true;
    }
    index++;
    at = dataStart + length + 4;
  }
}

// ---- JPEG (ITU T.81): SOI, marker segments with their lengths, a frame header (SOFn) before the first scan,
// entropy-coded data after each SOS, EOI last

const SOF_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function checkJpeg(b: Buffer): ImageCheck {
  let at = 2;
  let width = 0;
  let height = 0;
  let sawFrame = false;
  let sawScan = false;
  for (;;) {
    if (at + 2 > b.length) return fail('the JPEG is truncated (no EOI marker)');
    if (b[at] !== 0xff) return fail(`the JPEG has no marker at byte ${at}`);
    while (b[at + 1] === 0xff && at + 2 < b.length) at++; // fill bytes
    const marker = b[at + 1]!;
    at += 2;
    if (marker === 0xd9) {
      if (!sawFrame || !sawScan) return fail('the JPEG ends before its image data');
      if (at !== b.length) return fail('the JPEG has data after its end (EOI)');
      return { ok: true, format: 'jpeg', width, height };
    }
    if (marker === 0xd8 || marker === 0x00) return fail('the JPEG has an unexpected marker');
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue; // RSTn / TEM: no length
    if (at + 2 > b.length) return fail('the JPEG is truncated');
    const length = b.readUInt16BE(at);
    if (length < 2 || at + length > b.length) return fail(`the JPEG segment ${marker.toString(16)} is truncated`);
    if (SOF_MARKERS.has(marker)) {
      if (sawFrame) return fail('the JPEG has a second frame header');
      if (length < 8) return fail('the JPEG frame header is too short');
      height = b.readUInt16BE(at + 3);
      width = b.readUInt16BE(at + 5);
      const components = b[at + 7]!;
      if (components < 1 || length !== 8 + 3 * components) return fail('the JPEG frame header is inconsistent');
      sawFrame = true;
    }
    at += length;
    if (marker === 0xda) {
      if (!sawFrame) return fail('the JPEG has a scan before its frame header');
      sawScan = true;
      // entropy-coded data: up to the next marker that is not a stuffed 0xFF00 or a restart marker
      for (;;) {
        if (at + 1 >= b.length) return fail('the JPEG image data is truncated');
        if (b[at] === 0xff) {
          const next = b[at + 1]!;
          if (next === 0x00 || (next >= 0xd0 && next <= 0xd7)) at += 2;
          else if (next === 0xff) at++;
          else break;
        } else at++;
      }
    }
  }
}

// ---- WebP (RIFF): the RIFF size matches the file, chunks (padded to even sizes) fill it exactly, the image is a
// VP8 (lossy) or VP8L (lossless) bitstream, optionally after a VP8X header

function checkWebp(b: Buffer): ImageCheck {
  const riffSize = b.readUInt32LE(4);
  if (riffSize + 8 !== b.length) {
    return riffSize + 8 > b.length ? fail('the WebP file is truncated') : fail('the WebP has data after its end');
  }
  let at = 12;
  let canvas: { width: number; height: number } | null = null;
  let image: { width: number; height: number } | null = null;
  let first = true;
  while (at < b.length) {
    if (at + 8 > b.length) return fail('the WebP chunk header is truncated');
    const fourcc = b.toString('latin1', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    const data = at + 8;
    const padded = size + (size & 1);
    if (data + size > b.length) return fail(`the WebP chunk ${fourcc.trim()} is truncated`);
    if (data + padded > b.length) return fail(`the WebP chunk ${fourcc.trim()} misses its padding`);
    if (fourcc === 'VP8X') {
      if (!first || size < 10) return fail('the WebP extended header is misplaced or too short');
      if (b[data]! & 0x02) return fail('animated WebP logos are not supported');
      canvas = { width: b.readUIntLE(data + 4, 3) + 1, height: b.readUIntLE(data + 7, 3) + 1 };
    } else if (fourcc === 'VP8 ') {
      if (image) return fail('the WebP has two images');
      if (size < 10) return fail('the WebP VP8 frame is too short');
      const keyFrame = (b[data]! & 1) === 0;
      if (!keyFrame || b[data + 3] !== 0x9d || b[data + 4] !== 0x01 || b[data + 5] !== 0x2a) {
        return fail('the WebP VP8 frame header is invalid');
      }
      const partition = b.readUIntLE(data, 3) >>> 5;
      if (10 + partition > size) return fail('the WebP VP8 frame is truncated');
      image = { width: b.readUInt16LE(data + 6) & 0x3fff, height: b.readUInt16LE(data + 8) & 0x3fff };
    } else if (fourcc === 'VP8L') {
      if (image) return fail('the WebP has two images');
      if (size < 5 || b[data] !== 0x2f) return fail('the WebP VP8L header is invalid');
      const bits = b.readUInt32LE(data + 1);
      if (bits >>> 29 !== 0) return fail('the WebP VP8L version is not 0');
      image = { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    } else if (fourcc === 'ANIM' || fourcc === 'ANMF') {
      return fail('animated WebP logos are not supported');
    } else if (!/^[A-Za-z0-9 ]{4}$/.test(fourcc)) {
      return fail(`the WebP has an invalid chunk at byte ${at}`);
    }
    first = false;
    at = data + padded;
  }
  if (!image) return fail('the WebP has no image data');
  if (canvas && (canvas.width !== image.width || canvas.height !== image.height)) {
    return fail('the WebP canvas and image sizes differ');
  }
  return { ok: true, format: 'webp', width: image.width, height: image.height };
}
