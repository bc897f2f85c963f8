import { randomBytes } from 'node:crypto';

/**
 * Where generated documents (NFS-e XML, DANFSe PDF, project logos) are kept and from where they are served
 * publicly. Keys are opaque, unguessable paths built with `newDocumentKey`; a document never changes once
 * stored (a new version gets a new key), so it can be cached forever.
 */
export interface DocumentStorage {
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  /** The stored bytes and content type, or null when there is no document under that key. */
  get(key: string): Promise<{ body: Buffer; contentType: string } | null>;
  /** Removes the document; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** Public URL of the document: `<base>/<key>`, with the organization's white-label base URL when given. */
  publicUrl(key: string, baseUrlOverride?: string | null): string;
}

/** Thrown for a key that could escape the storage root or is otherwise malformed (a programmer error). */
export class InvalidStorageKeyError extends Error {
  constructor(key: string, reason: string) {
    super(`invalid storage key ${JSON.stringify(key.slice(0, 200))}: ${reason}`);
    this.name = 'InvalidStorageKeyError';
  }
}

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
const MAX_KEY_LENGTH = 512;

/**
 * Why a key is unacceptable, or null when it is fine. Keys are relative paths of `[A-Za-z0-9._-]` segments
 * separated by `/`: no `..`, no absolute paths, no backslashes, no empty or hidden segments.
 */
export function storageKeyProblem(key: string): string | null {
  if (typeof key !== 'string' || key.length === 0) return 'empty';
  if (key.length > MAX_KEY_LENGTH) return `longer than ${MAX_KEY_LENGTH} characters`;
  if (key.includes('\\')) return 'contains a backslash';
  if (key.includes('..')) return 'contains ".."';
  if (key.startsWith('/')) return 'absolute path';
  for (const segment of key.split('/')) {
    if (segment === '') return 'empty path segment';
    if (!SEGMENT.test(segment)) return `segment ${JSON.stringify(segment)} has characters outside [A-Za-z0-9._-]`;
  }
  return null;
}

export function assertStorageKey(key: string): void {
  const problem = storageKeyProblem(key);
  if (problem) throw new InvalidStorageKeyError(key, problem);
}

/**
 * A fresh, unguessable key for a project's document: `p/<projectId>/<32 random hex>/<fileName>`
 * (128 random bits, so the public URL is the only capability needed to read it).
 */
export function newDocumentKey(projectId: string, fileName: string): string {
  for (const [what, value] of [
    ['projectId', projectId],
    ['fileName', fileName],
  ] as const) {
    if (!SEGMENT.test(value) || value.includes('..')) {
      throw new InvalidStorageKeyError(value, `${what} must be one path segment of [A-Za-z0-9._-]`);
    }
  }
  return `p/${projectId}/${randomBytes(16).toString('hex')}/${fileName}`;
}

/** `<base>/<key>` with exactly one slash between them. */
export function joinPublicUrl(baseUrl: string, key: string): string {
  assertStorageKey(key);
  return `${baseUrl.replace(/\/+$/, '')}/${key}`;
}

export const IMMUTABLE_CACHE_CONTROL = 'public, max-age=31536000, immutable';
export const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/** The content types of the documents the service stores (the local storage infers them from the key's extension). */
export const XML_CONTENT_TYPE = 'application/xml; charset=utf-8';
export const PDF_CONTENT_TYPE = 'application/pdf';
