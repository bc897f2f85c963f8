import { spawn } from 'node:child_process';
import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The embedded database's data directory, claimed before anything else opens it: the lock file (one process per
 * directory) and, on a first start, the copy of the migrated template cluster. Light on imports on purpose:
 * `main.ts` claims the directory first thing, so the copy (about a thousand small files: kernel work on libuv's
 * thread pool) runs while the rest of the service's modules load; `openDatabase` then finds it claimed.
 */

/** The embedded database's data directory is held by another live process (start-up refuses with this message). */
export class DataDirectoryInUseError extends Error {}

/**
 * PGlite has no cross-process lock: one process per data directory. A lock file with the owner's pid is
 * taken at open; a lock left by a dead process (kill -9) is taken over.
 */
function takeDataDirLock(dir: string): () => void {
  const path = resolve(dir, 'nfse.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(path, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSync(path, 'utf8').trim());
      if (owner && owner !== process.pid && isAlive(owner)) {
        throw new DataDirectoryInUseError(
          `the data directory ${dir} is in use by process ${owner}; the embedded database allows one process (use DATABASE_URL for several)`,
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new Error(`could not lock ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A migrated PGlite cluster (with the job queue's schema) made by `npm run build` in dist/pglite-template/.
 * Creating a cluster (initdb inside WebAssembly) is most of a first start; copying the template takes a fraction.
 * Resolved next to the running code, so only the compiled service (dist/) has one: from the sources (tests, `npm
 * run dev`) the cluster is created as before. Migrations still run after the copy (nothing to do if current).
 */
const pgliteTemplate = fileURLToPath(new URL('../../pglite-template', import.meta.url));

/**
 * A spare copy of the template (made by `npm run build`, then again in the background after each use), renamed into
 * place on a first start: a rename is instant where the copy (about a thousand small files) is most of a first
 * start. Taken by one process at most (the rename is atomic); without one (taken, read-only install, another file
 * system) the template is copied as before.
 */
const pgliteSpare = fileURLToPath(new URL('../../pglite-spare', import.meta.url));

/** Files copied at once: the copies run on libuv's thread pool (4 threads), so a few more keep it busy. */
const COPIES_IN_FLIGHT = 8;

async function copyTemplate(to: string): Promise<void> {
  const files: string[] = [];
  const walk = async (from: string) => {
    await mkdir(join(to, relative(pgliteTemplate, from)), { recursive: true });
    for (const entry of await readdir(from, { withFileTypes: true })) {
      const path = join(from, entry.name);
      if (entry.isDirectory()) await walk(path);
      else files.push(path);
    }
  };
  await walk(pgliteTemplate);
  let next = 0;
  await Promise.all(
    Array.from({ length: COPIES_IN_FLIGHT }, async () => {
      while (next < files.length) {
        const file = files[next++]!;
        await copyFile(file, join(to, relative(pgliteTemplate, file)), constants.COPYFILE_FICLONE);
      }
    }),
  );
}

/**
 * Makes a spare copy of the template (beside it, then renamed: a spare is always complete), after removing the
 * partial spares of processes that died while making one. Run by `spare-maker.ts`, a process of its own.
 */
export async function makeSpare(): Promise<void> {
  if (existsSync(pgliteSpare) || !existsSync(join(pgliteTemplate, 'PG_VERSION'))) return;
  const parent = dirname(pgliteSpare);
  for (const name of await readdir(parent)) {
    const pid = Number(/^pglite-spare\.partial-(\d+)$/.exec(name)?.[1] ?? Number.NaN);
    if (pid && pid !== process.pid && !isAlive(pid)) await rm(join(parent, name), { recursive: true, force: true });
  }
  const partial = `${pgliteSpare}.partial-${process.pid}`;
  try {
    await copyTemplate(partial);
    await rename(partial, pgliteSpare); // fails if another process made one meanwhile: ours is dropped
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

/**
 * A new spare for the next first start, made by a detached process at the lowest scheduling priority: the copy is
 * mostly kernel time, which would otherwise compete with this start (or this service) for the CPU. It outlives this
 * process if this one stops first. Best effort: without a spare the next first start copies the template.
 */
function replenishSpare(): void {
  if (existsSync(pgliteSpare)) return;
  try {
    const child = spawn(process.execPath, [fileURLToPath(new URL('./spare-maker.js', import.meta.url))], {
      detached: true,
      stdio: 'ignore',
    });
    child.on('error', () => undefined);
    child.unref();
    if (child.pid) setPriority(child.pid, 19);
  } catch {
    // no spare: the next first start copies
  }
}

async function seedFromTemplate(dir: string): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION')) || !existsSync(join(pgliteTemplate, 'PG_VERSION'))) return;
  if (existsSync(dir) && (await readdir(dir)).length > 0) return; // someone else's files: leave them to PGlite
  await rm(dir, { recursive: true, force: true }); // an empty directory, if any (checked above)
  try {
    await rename(pgliteSpare, dir);
    replenishSpare();
    return;
  } catch {
    // no spare (another process took it, a read-only install, another file system): copy the template
  }
  // copied beside the directory and renamed into place: a copy cut short (kill -9) is never taken for a cluster,
  // and the next first start copies again
  const partial = `${dir}.partial`;
  await rm(partial, { recursive: true, force: true });
  await copyTemplate(partial);
  await rename(partial, dir);
  replenishSpare();
}

export interface ClaimedDataDir {
  /** the cluster's directory (DATA_DIR/db) */
  dir: string;
  /** resolves once a first start's template copy is in place (at once otherwise) */
  seeded: Promise<void>;
  release(): void;
}

const claims = new Map<string, ClaimedDataDir>();

/**
 * Locks DATA_DIR for this process and starts seeding its cluster from the template on a first start. Idempotent
 * per directory within a process: `openDatabase` receives the claim `main.ts` made early.
 */
export function claimEmbeddedDataDir(dataDir: string): ClaimedDataDir {
  const key = resolve(dataDir);
  const known = claims.get(key);
  if (known) return known;
  mkdirSync(dataDir, { recursive: true });
  const releaseLock = takeDataDirLock(dataDir);
  const dir = resolve(dataDir, 'db');
  const seeded = seedFromTemplate(dir);
  seeded.catch(() => undefined); // awaited by openDatabase; an early failure must not be an unhandled rejection
  const claim: ClaimedDataDir = {
    dir,
    seeded,
    release: () => {
      claims.delete(key);
      releaseLock();
    },
  };
  claims.set(key, claim);
  return claim;
}
