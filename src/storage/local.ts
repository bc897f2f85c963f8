import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import {
  assertStorageKey,
  DEFAULT_CONTENT_TYPE,
  type DocumentStorage,
  IMMUTABLE_CACHE_CONTROL,
  InvalidStorageKeyError,
  joinPublicUrl,
  PDF_CONTENT_TYPE,
  storageKeyProblem,
  XML_CONTENT_TYPE,
} from './types.ts';

export interface LocalStorageOptions {
  /** Directory holding the documents (created on first write). */
  rootDir: string;
  /**
   * Base of the public URLs, e.g. `http://127.0.0.1:3000/files` (the route serving `get`); a function is read at
   * each call (the address may be known only once the server listens).
   */
  publicBaseUrl: string | (() => string);
}

/**
 * Suffix of the file holding a document's content type, beside the document. `~` is not allowed in keys, so
 * no key can name a metadata or temporary file.
 */
const TYPE_SUFFIX = '.~type';
const TEMP_SUFFIX = '.~tmp';

/**
 * The content types the service stores, by the extension of their keys: a document of one of these is stored without
 * a type file (two files, a temporary one and a rename, for every document), and read back with this type.
 */
const TYPE_OF_EXTENSION: Record<string, string> = {
  '.xml': XML_CONTENT_TYPE,
  '.pdf': PDF_CONTENT_TYPE,
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
};

function typeOfExtension(key: string): string | undefined {
  const dot = key.lastIndexOf('.');
  return dot < 0 ? undefined : TYPE_OF_EXTENSION[key.slice(dot).toLowerCase()];
}

/**
 * Filesystem storage: the embedded default. Writes are atomic (temporary file + rename). A content type other than
 * the one its key's extension implies (`TYPE_OF_EXTENSION`) is kept in a file beside the document.
 */
export function createLocalStorage(options: LocalStorageOptions): DocumentStorage {
  const root = resolve(options.rootDir);

  function pathOf(key: string): string {
    assertStorageKey(key);
    const path = resolve(root, key);
    // Defence in depth: the key rules already make this impossible.
    if (!path.startsWith(root + sep)) throw new InvalidStorageKeyError(key, 'resolves outside the storage root');
    return path;
  }

  async function writeAtomically(path: string, data: Buffer | string): Promise<void> {
    const temp = `${path}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
    try {
      await writeFile(temp, data, { flag: 'wx' });
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  return {
    async put(key, body, contentType) {
      const path = pathOf(key);
      await mkdir(dirname(path), { recursive: true });
      // The type is written first so that a reader who sees the document also sees its type.
      const type = contentType || DEFAULT_CONTENT_TYPE;
      if (type !== typeOfExtension(key)) await writeAtomically(path + TYPE_SUFFIX, type);
      await writeAtomically(path, body);
    },

    async get(key) {
      const path = pathOf(key);
      let body: Buffer;
      try {
        body = await readFile(path);
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
      let contentType = typeOfExtension(key) ?? DEFAULT_CONTENT_TYPE;
      try {
        contentType = (await readFile(path + TYPE_SUFFIX, 'utf8')).trim() || DEFAULT_CONTENT_TYPE;
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
      return { body, contentType };
    },

    async delete(key) {
      const path = pathOf(key);
      await rm(path, { force: true });
      await rm(path + TYPE_SUFFIX, { force: true });
      // Remove the now-empty directories of the key (its random segment, then the project's), never the root.
      let dir = dirname(path);
      while (dir.startsWith(root + sep)) {
        try {
          await rmdir(dir);
        } catch {
          break; // not empty (or already gone)
        }
        dir = dirname(dir);
      }
    },

    publicUrl(key, baseUrlOverride) {
      const base = typeof options.publicBaseUrl === 'function' ? options.publicBaseUrl() : options.publicBaseUrl;
      return joinPublicUrl(baseUrlOverride || base, key);
    },
  };
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR';
}

export type ServedFile =
  | { found: true; body: Buffer; headers: Record<string, string> }
  | { found: false; reason: 'invalid-key' | 'not-found' };

/**
 * What a public file route answers for `key`: the document with its headers (immutable cache), or not found.
 * Malformed keys (`..`, absolute paths, backslashes…) are answered as not found and never reach the storage.
 */
export async function serveLocalFile(storage: DocumentStorage, key: string): Promise<ServedFile> {
  if (storageKeyProblem(key)) return { found: false, reason: 'invalid-key' };
  const file = await storage.get(key);
  if (!file) return { found: false, reason: 'not-found' };
  return {
    found: true,
    body: file.body,
    headers: {
      'content-type': file.contentType,
      'content-length': String(file.body.length),
      'cache-control': IMMUTABLE_CACHE_CONTROL,
      'x-content-type-options': 'nosniff',
    },
  };
}
