import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSecret, parseMasterKey, sealSecret } from '../../src/certificates/vault.ts';

const key = randomBytes(32);

describe('vault', () => {
  it('round-trips a secret, with a fresh IV every time', () => {
    const plain = randomBytes(3000);
    const a = sealSecret(plain, key);
    const b = sealSecret(plain, key);
    expect(a.equals(b)).toBe(false);
    expect(a[0]).toBe(1);
    expect(a.length).toBe(1 + 12 + 16 + plain.length);
    expect(a.includes(plain.subarray(0, 32))).toBe(false);
    expect(openSecret(a, key).equals(plain)).toBe(true);
    expect(openSecret(b, key).equals(plain)).toBe(true);
    expect(openSecret(sealSecret(Buffer.alloc(0), key), key).length).toBe(0);
  });

  it('detects tampering anywhere in the sealed data', () => {
    const sealed = sealSecret(Buffer.from('senha do certificado'), key);
    for (const index of [0, 1, 12, 13, 28, 29, sealed.length - 1]) {
      const copy = Buffer.from(sealed);
      copy[index] ^= 0x01;
      expect(() => openSecret(copy, key), `byte ${index}`).toThrow();
    }
    expect(() => openSecret(sealed.subarray(0, sealed.length - 1), key)).toThrow();
    expect(() => openSecret(sealed.subarray(0, 20), key)).toThrow(/truncated/);
  });

  it('refuses another master key', () => {
    const sealed = sealSecret(Buffer.from('x'), key);
    expect(() => openSecret(sealed, randomBytes(32))).toThrow(/authentication/);
    expect(() => sealSecret(Buffer.from('x'), randomBytes(16))).toThrow();
  });

  it('parses a master key from hex or base64', () => {
    const hex = parseMasterKey(` ${key.toString('hex')}\n`);
    expect(hex.ok && hex.value.equals(key)).toBe(true);
    const upper = parseMasterKey(key.toString('hex').toUpperCase());
    expect(upper.ok && upper.value.equals(key)).toBe(true);
    const b64 = parseMasterKey(key.toString('base64'));
    expect(b64.ok && b64.value.equals(key)).toBe(true);
    const b64url = parseMasterKey(key.toString('base64url'));
    expect(b64url.ok && b64url.value.equals(key)).toBe(true);
    for (const bad of ['', 'abc', key.toString('hex').slice(2), randomBytes(31).toString('base64'), 'z'.repeat(64)]) {
      expect(parseMasterKey(bad), bad).toMatchObject({ ok: false, error: { code: 'MASTER_KEY_INVALID' } });
    }
  });
});
