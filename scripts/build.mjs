#!/usr/bin/env node
/**
 * Production build: `npm run build` (also run by `npm ci`/`npm install` through the `prepare` script).
 * Compiles src/ with tsconfig.build.json into dist/ (relative `.ts` imports rewritten to `.js`) and copies the
 * files the code reads at run time next to the compiled modules, so that every `new URL('…', import.meta.url)`
 * resolves inside dist/ exactly as it does in the sources: src/** non-TypeScript files (tables, migrations),
 * schemas/ and assets/ (fonts); then prepares dist/pglite-template/ (see below). Plain JavaScript: runs without tsx.
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildDashboard } from './build-dashboard.mjs';

export const root = fileURLToPath(new URL('..', import.meta.url));
export const dist = join(root, 'dist');
/** Written last: its time is the build's, its presence says the build finished. */
export const stamp = join(dist, '.build-complete');
/** What the build reads; a file newer than the stamp makes the build stale. */
const INPUTS = ['src', 'schemas', 'assets', 'web', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
const COPIED_DIRS = ['schemas', 'assets'];

function* files(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return;
  if (!st.isDirectory()) {
    yield { path, mtimeMs: st.mtimeMs };
    return;
  }
  for (const entry of readdirSync(path)) yield* files(join(path, entry));
}

/** Whether dist/ holds a finished build at least as new as every source file (a few milliseconds). */
export function buildIsFresh() {
  const built = statSync(stamp, { throwIfNoEntry: false });
  if (!built) return false;
  for (const input of INPUTS) for (const f of files(join(root, input))) if (f.mtimeMs > built.mtimeMs) return false;
  return true;
}

/**
 * Builds into a fresh directory and swaps it in at the end, under a lock: two processes finding dist/ stale at
 * once (two `npm start` in a row, parallel tests) build once, one after the other, and a half-written dist/ is
 * never visible.
 */
export async function build({ quiet = false } = {}) {
  const release = await lock();
  try {
    if (buildIsFresh()) return; // built by whoever held the lock before us
    const work = `${dist}.building-${process.pid}`;
    rmSync(work, { recursive: true, force: true });
    compile(work, quiet);
    for (const f of files(join(root, 'src'))) {
      if (f.path.endsWith('.ts')) continue;
      cpSync(f.path, join(work, f.path.slice(root.length)));
    }
    for (const dir of COPIED_DIRS) {
      if (existsSync(join(root, dir))) cpSync(join(root, dir), join(work, dir), { recursive: true });
    }
    await buildDashboard(join(work, 'dashboard')); // the /dashboard front-end (web/, Vite)
    await buildPgliteTemplate(work);
    writeFileSync(join(work, '.build-complete'), `${new Date().toISOString()}\n`);
    rmSync(dist, { recursive: true, force: true });
    renameSync(work, dist);
  } finally {
    release();
  }
}

function compile(outDir, quiet) {
  let tsc;
  try {
    const pkg = createRequire(import.meta.url).resolve('typescript/package.json');
    tsc = join(dirname(pkg), 'bin', 'tsc');
  } catch {
    throw new Error('TypeScript is not installed (a production install without dev dependencies?): run `npm ci`.');
  }
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', outDir], {
    cwd: root,
    stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`tsc failed (${r.status})${quiet ? `:\n${r.stdout}${r.stderr}` : ''}`);
}

async function lock() {
  const path = `${dist}.lock`;
  for (let waited = 0; ; waited += 200) {
    try {
      writeFileSync(path, String(process.pid), { flag: 'wx' });
      return () => rmSync(path, { force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(path, 'utf8'));
      let alive = true;
      try {
        process.kill(owner, 0);
      } catch {
        alive = false;
      }
      if (!alive || waited > 300_000)
        rmSync(path, { force: true }); // a builder that died
      else await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * dist/pglite-template/: a PGlite cluster with every migration applied and the job queue's schema, copied into an
 * empty data directory on the first start (src/db/embedded-dir.ts) instead of creating a cluster there; and
 * dist/pglite-spare/, one copy of it made ahead, renamed into place by the next first start.
 */
async function buildPgliteTemplate(out) {
  const work = mkdtempSync(join(tmpdir(), 'nfse-build-pglite-'));
  try {
    const { openDatabase, runMigrations } = await import(pathToFileURL(join(out, 'src/db/client.js')).href);
    const { JobQueue } = await import(pathToFileURL(join(out, 'src/jobs/queue.js')).href);
    const database = await openDatabase({ databaseUrl: null, dataDir: work });
    await runMigrations(database, null);
    const queue = new JobQueue(database);
    await queue.start();
    await queue.stop({ graceful: false });
    await database.close();
    cpSync(join(work, 'db'), join(out, 'pglite-template'), { recursive: true });
    // the first first-start's cluster, renamed into place instead of copied (src/db/embedded-dir.ts)
    cpSync(join(work, 'db'), join(out, 'pglite-spare'), { recursive: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = Date.now();
  rmSync(stamp, { force: true }); // `npm run build` always builds
  await build();
  console.log(`built dist/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
