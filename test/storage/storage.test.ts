import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalStorage, serveLocalFile } from '../../src/storage/local.ts';
import { createS3Storage, type S3DocumentStorage } from '../../src/storage/s3.ts';
import {
  type DocumentStorage,
  InvalidStorageKeyError,
  newDocumentKey,
  storageKeyProblem,
} from '../../src/storage/types.ts';

const PROJECT = '0b7c2f36-6a43-4a43-9d0e-3f5f3c3b8a11';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
// s3rver ships no type declarations.
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;

const TRAVERSAL_KEYS = [
  '../outside.pdf',
  'p/../../outside.pdf',
  'p/x/..',
  '..',
  '/etc/passwd',
  'p\\..\\outside.pdf',
  'p\\x.pdf',
  'p//x.pdf',
  'p/./x.pdf',
  'p/x/',
  '',
  'p/x y.pdf',
  'p/x.pdf.~type',
  'C:/windows/x.pdf',
  'p/\u0000x.pdf',
];

/** The behaviour every driver must share. */
function describeContract(name: string, setup: () => { storage: DocumentStorage; base: string }) {
  describe(`${name}: DocumentStorage contract`, () => {
    it('stores and returns the same bytes and content type', async () => {
      const { storage } = setup();
      const key = newDocumentKey(PROJECT, 'nfse.pdf');
      const body = Buffer.concat([Buffer.from('%PDF-1.3\n'), randomBytes(70_000), Buffer.from([0, 255, 13, 10])]);
      await storage.put(key, body, 'application/pdf');
      const got = await storage.get(key);
      expect(got).not.toBeNull();
      expect(got?.contentType).toBe('application/pdf');
      expect(got?.body.equals(body)).toBe(true);

      const xmlKey = newDocumentKey(PROJECT, 'nfse.xml');
      const xml = Buffer.from('<?xml version="1.0" encoding="UTF-8"?><NFSe>Niterói &amp; ação</NFSe>', 'utf8');
      await storage.put(xmlKey, xml, 'application/xml; charset=utf-8');
      const gotXml = await storage.get(xmlKey);
      expect(gotXml?.contentType).toBe('application/xml; charset=utf-8');
      expect(gotXml?.body.toString('utf8')).toBe(xml.toString('utf8'));
    });

    it('overwrites a key with the new bytes and type', async () => {
      const { storage } = setup();
      const key = newDocumentKey(PROJECT, 'logo');
      await storage.put(key, Buffer.from('first'), 'image/png');
      await storage.put(key, Buffer.from('second version'), 'image/jpeg');
      const got = await storage.get(key);
      expect(got?.body.toString()).toBe('second version');
      expect(got?.contentType).toBe('image/jpeg');
    });

    it('stores an empty document', async () => {
      const { storage } = setup();
      const key = newDocumentKey(PROJECT, 'empty.txt');
      await storage.put(key, Buffer.alloc(0), 'text/plain');
      const got = await storage.get(key);
      expect(got?.body.length).toBe(0);
      expect(got?.contentType).toBe('text/plain');
    });

    it('returns null for a missing key', async () => {
      const { storage } = setup();
      expect(await storage.get(newDocumentKey(PROJECT, 'missing.pdf'))).toBeNull();
      expect(await storage.get(`p/${PROJECT}`)).toBeNull();
    });

    it('deletes a document; deleting again or a missing key is fine', async () => {
      const { storage } = setup();
      const key = newDocumentKey(PROJECT, 'nfse.pdf');
      const other = newDocumentKey(PROJECT, 'nfse.pdf');
      await storage.put(key, Buffer.from('to delete'), 'application/pdf');
      await storage.put(other, Buffer.from('to keep'), 'application/pdf');
      await storage.delete(key);
      expect(await storage.get(key)).toBeNull();
      await storage.delete(key);
      await storage.delete(newDocumentKey(PROJECT, 'never-stored.pdf'));
      expect((await storage.get(other))?.body.toString()).toBe('to keep');
    });

    it('builds public URLs with and without the white-label override', () => {
      const { storage, base } = setup();
      const key = newDocumentKey(PROJECT, 'nfse.pdf');
      expect(storage.publicUrl(key)).toBe(`${base}/${key}`);
      expect(storage.publicUrl(key, null)).toBe(`${base}/${key}`);
      expect(storage.publicUrl(key, 'https://docs.cliente.com.br')).toBe(`https://docs.cliente.com.br/${key}`);
      expect(storage.publicUrl(key, 'https://docs.cliente.com.br/nfse/')).toBe(
        `https://docs.cliente.com.br/nfse/${key}`,
      );
    });

    it('refuses keys that could escape the storage', async () => {
      const { storage } = setup();
      for (const key of TRAVERSAL_KEYS) {
        await expect(storage.put(key, Buffer.from('x'), 'text/plain'), key).rejects.toBeInstanceOf(
          InvalidStorageKeyError,
        );
        await expect(storage.get(key), key).rejects.toBeInstanceOf(InvalidStorageKeyError);
        await expect(storage.delete(key), key).rejects.toBeInstanceOf(InvalidStorageKeyError);
        expect(() => storage.publicUrl(key), key).toThrow(InvalidStorageKeyError);
      }
    });
  });
}

describe('document keys', () => {
  it('are unguessable paths under the project', () => {
    const a = newDocumentKey(PROJECT, 'nfse.pdf');
    const b = newDocumentKey(PROJECT, 'nfse.pdf');
    expect(a).toMatch(new RegExp(`^p/${PROJECT}/[0-9a-f]{32}/nfse\\.pdf$`));
    expect(a).not.toBe(b);
    expect(storageKeyProblem(a)).toBeNull();
  });

  it('refuse project ids or file names that are not one safe segment', () => {
    for (const [projectId, fileName] of [
      ['../x', 'nfse.pdf'],
      [PROJECT, '../../etc/passwd'],
      [PROJECT, 'a/b.pdf'],
      [PROJECT, ''],
      ['', 'nfse.pdf'],
      [PROJECT, '..'],
    ]) {
      expect(() => newDocumentKey(projectId, fileName)).toThrow(InvalidStorageKeyError);
    }
  });

  it('flag every traversal form', () => {
    for (const key of TRAVERSAL_KEYS) expect(storageKeyProblem(key), key).not.toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------------------
// Local filesystem driver

const localRoot = mkdtempSync(join(tmpdir(), 'storage-local-'));
const localBase = 'http://127.0.0.1:3000/files';
const docsDir = join(localRoot, 'docs');
const local = createLocalStorage({ rootDir: docsDir, publicBaseUrl: localBase });
afterAll(() => rmSync(localRoot, { recursive: true, force: true }));

describeContract('local', () => ({ storage: local, base: localBase }));

describe('local driver', () => {
  it('keeps files inside the root and never touches a file outside it', async () => {
    const outside = join(localRoot, 'outside.pdf');
    writeFileSync(outside, 'secret');
    await expect(local.get('../outside.pdf')).rejects.toThrow(InvalidStorageKeyError);
    await expect(local.put('../outside.pdf', Buffer.from('overwritten'), 'text/plain')).rejects.toThrow();
    await expect(local.delete('../outside.pdf')).rejects.toThrow();
    expect(existsSync(outside)).toBe(true);
  });

  it('writes atomically: no temporary files remain; a type other than the extension says sits beside the file', async () => {
    const key = newDocumentKey(PROJECT, 'nfse.pdf');
    await local.put(key, Buffer.from('%PDF-'), 'application/pdf');
    expect(readdirSync(join(docsDir, key, '..'))).toEqual(['nfse.pdf']);
    expect((await local.get(key))?.contentType).toBe('application/pdf');
    const xml = newDocumentKey(PROJECT, 'nfse.xml');
    await local.put(xml, Buffer.from('<NFSe/>'), 'application/xml; charset=utf-8');
    expect(readdirSync(join(docsDir, xml, '..'))).toEqual(['nfse.xml']);
    expect((await local.get(xml))?.contentType).toBe('application/xml; charset=utf-8');
    // another type than the extension's, or no known extension: the type file keeps it
    const odd = newDocumentKey(PROJECT, 'notes.pdf');
    await local.put(odd, Buffer.from('plain'), 'text/plain');
    expect(readdirSync(join(docsDir, odd, '..')).sort()).toEqual(['notes.pdf', 'notes.pdf.~type']);
    expect((await local.get(odd))?.contentType).toBe('text/plain');
    const bare = newDocumentKey(PROJECT, 'blob');
    await local.put(bare, Buffer.from('x'), 'application/pdf');
    expect(readdirSync(join(docsDir, bare, '..')).sort()).toEqual(['blob', 'blob.~type']);
    expect((await local.get(bare))?.contentType).toBe('application/pdf');
  });

  it('removes the empty directories of a deleted key but keeps the root', async () => {
    const project = 'project-to-clean';
    const key = newDocumentKey(project, 'nfse.xml');
    await local.put(key, Buffer.from('<NFSe/>'), 'application/xml');
    expect(existsSync(join(docsDir, 'p', project))).toBe(true);
    await local.delete(key);
    expect(existsSync(join(docsDir, 'p', project))).toBe(false);
    expect(existsSync(docsDir)).toBe(true);
  });

  it('serves files for the public route: headers for hits, not found for misses and bad keys', async () => {
    const key = newDocumentKey(PROJECT, 'nfse.pdf');
    await local.put(key, Buffer.from('%PDF-1.3 body'), 'application/pdf');
    const hit = await serveLocalFile(local, key);
    expect(hit.found).toBe(true);
    if (hit.found) {
      expect(hit.body.toString()).toBe('%PDF-1.3 body');
      expect(hit.headers).toEqual({
        'content-type': 'application/pdf',
        'content-length': '13',
        'cache-control': 'public, max-age=31536000, immutable',
        'x-content-type-options': 'nosniff',
      });
    }
    expect(await serveLocalFile(local, newDocumentKey(PROJECT, 'nfse.pdf'))).toEqual({
      found: false,
      reason: 'not-found',
    });
    for (const bad of TRAVERSAL_KEYS) {
      expect(await serveLocalFile(local, bad), bad).toEqual({ found: false, reason: 'invalid-key' });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// S3 driver against a real S3-compatible server (s3rver) on 127.0.0.1

const s3Dir = mkdtempSync(join(tmpdir(), 'storage-s3rver-'));
const s3Base = 'https://cdn.example.com';
let s3server: S3rverInstance;
let s3: S3DocumentStorage;
let s3Endpoint = '';

beforeAll(async () => {
  s3server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    directory: s3Dir,
    silent: true,
    configureBuckets: [{ name: 'docs' }],
  });
  const address = await s3server.run();
  s3Endpoint = `http://127.0.0.1:${address.port}`;
  s3 = createS3Storage({
    bucket: 'docs',
    endpoint: s3Endpoint,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    forcePathStyle: true,
    publicBaseUrl: s3Base,
  });
});

afterAll(async () => {
  s3?.close();
  s3server?.httpServer?.closeAllConnections();
  await s3server?.close();
  rmSync(s3Dir, { recursive: true, force: true });
});

describeContract('s3', () => ({ storage: s3, base: s3Base }));

describe('s3 driver', () => {
  it('stores objects with their content type and an immutable cache policy', async () => {
    const key = newDocumentKey(PROJECT, 'nfse.pdf');
    await s3.put(key, Buffer.from('%PDF-1.3 s3'), 'application/pdf');
    // Read back over plain HTTP, as a CDN in front of the bucket would.
    const res = await fetch(`${s3Endpoint}/docs/${key}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await res.text()).toBe('%PDF-1.3 s3');
  });

  it('reports a missing bucket as an error, not as a missing document', async () => {
    const wrong = createS3Storage({
      bucket: 'no-such-bucket',
      endpoint: s3Endpoint,
      region: 'us-east-1',
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
      forcePathStyle: true,
      publicBaseUrl: s3Base,
    });
    try {
      await expect(wrong.get(newDocumentKey(PROJECT, 'nfse.pdf'))).rejects.toThrow();
    } finally {
      wrong.close();
    }
  });
});
