import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Member passwords (dashboard sign-in) are stored as scrypt hashes: `scrypt$<N>$<r>$<p>$<salt b64url>$<hash b64url>`,
 * the parameters kept with each hash so that they can be raised later without invalidating older hashes. N 2^15,
 * r 8, p 3: one of the OWASP Password Storage Cheat Sheet's equivalent scrypt settings (32 MiB per hash), 16-byte
 * salt, 32-byte key.
 */

const N = 2 ** 15;
const R = 8;
const P = 3;
const KEY_LENGTH = 32;
/** Room for N 2^15 × r 8 (128·N·r = 32 MiB) over Node's 32 MiB default. */
const MAX_MEMORY = 64 * 1024 * 1024;

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N: n, r, p, maxmem: MAX_MEMORY }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Whether `password` matches `stored`; a malformed stored value never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const params = [n, r, p].map(Number);
  if (params.some((v) => !Number.isInteger(v) || v < 1)) return false;
  const expected = Buffer.from(hash, 'base64url');
  if (expected.length !== KEY_LENGTH) return false;
  const key = await derive(password, Buffer.from(salt, 'base64url'), params[0]!, params[1]!, params[2]!);
  return timingSafeEqual(key, expected);
}

/** A random password for a member created without one (shown once by the CLI): 24 URL-safe characters. */
export function newPassword(): string {
  return randomBytes(18).toString('base64url');
}
