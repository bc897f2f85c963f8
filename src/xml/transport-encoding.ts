import { gunzipSync, gzipSync } from 'node:zlib';

/** XML as the national API transports it: UTF-8 bytes, GZip-compressed, then Base64 (e.g. `dpsXmlGZipB64`). */
export function gzipBase64(xml: string): string {
  return gzipSync(Buffer.from(xml, 'utf8')).toString('base64');
}

/** Inverse of `gzipBase64`. Throws when the text is not Base64 of GZip data. */
export function gunzipBase64(b64: string): string {
  return gunzipSync(Buffer.from(b64, 'base64')).toString('utf8');
}
