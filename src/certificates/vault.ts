import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (PKCS#12 files, their passwords) sealed with AES-256-GCM under the service master key.
 *
 * Layout: version (1 byte, 0x01) | IV (12 bytes, random) | tag (16 bytes) | ciphertext.
 * The version byte is authenticated too (AAD), so it cannot be swapped.
 */

const VERSION = 0x01;
const IV_LENGTH = 12;
const TAG_LENGTH = 16;
const HEADER_LENGTH = 1 + IV_LENGTH + TAG_LENGTH;

export type MasterKeyResult =
  | { ok: true; value: Buffer }
  | { ok: false; error: { code: 'MASTER_KEY_INVALID'; message: string } };

function assertKey(masterKey: Buffer): void {
  if (!Buffer.isBuffer(masterKey) || masterKey.length !== 32) {
    throw new Error('the master key must be 32 bytes (use parseMasterKey)');
  }
}

export function sealSecret(plain: Buffer, masterKey: Buffer): Buffer {
  assertKey(masterKey);
  const iv = randomBytes(IV_LENGTH);
  const version = Buffer.from([VERSION]);
  const cipher = createCipheriv('aes-256-gcm', masterKey, iv, { authTagLength: TAG_LENGTH });
  cipher.setAAD(version);
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([version, iv, cipher.getAuthTag(), body]);
}

/**
 * Opens a sealed secret. Throws when the data was altered, truncated, sealed under another key or by an
 * unknown format version: none of these is a normal condition for data this service wrote itself.
 */
export function openSecret(sealed: Buffer, masterKey: Buffer): Buffer {
  assertKey(masterKey);
  if (sealed.length < HEADER_LENGTH) throw new Error('sealed secret is truncated');
  if (sealed[0] !== VERSION) throw new Error(`unknown sealed secret version ${sealed[0]}`);
  const iv = sealed.subarray(1, 1 + IV_LENGTH);
  const tag = sealed.subarray(1 + IV_LENGTH, HEADER_LENGTH);
  const decipher = createDecipheriv('aes-256-gcm', masterKey, iv, { authTagLength: TAG_LENGTH });
  decipher.setAAD(sealed.subarray(0, 1));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(sealed.subarray(HEADER_LENGTH)), decipher.final()]);
  } catch {
    throw new Error('sealed secret failed authentication (tampered, or another master key)');
  }
}

/** A master key given as 64 hexadecimal characters or as the base64 of 32 bytes. */
export function parseMasterKey(text: string): MasterKeyResult {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return { ok: true, value: Buffer.from(value, 'hex') };
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) {
    const bytes = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return { ok: true, value: bytes };
  }
  return {
    ok: false,
    error: {
      code: 'MASTER_KEY_INVALID',
      message:
        'The master key must be 64 hexadecimal characters or the base64 of 32 bytes (e.g. `openssl rand -hex 32`).',
    },
  };
}
