import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * JSONL persistence of the sandbox kit: one JSON value per line, appended; the directory is made private (0700)
 * and the file is created 0600. What a sandbox keeps across restarts (e.g. what it issued) is replayed from it.
 */

/** Creates the directory (and its parents) with mode 0700 and brings an existing one to 0700. */
export function ensurePrivateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dir, 0o700);
  } catch {
    // a directory we do not own keeps its mode; writing into it still works or fails on its own
  }
}

/**
 * Replays a JSONL file line by line (blank lines skipped). A line that does not parse, or that `apply` throws on,
 * is reported through `warn` and skipped: a torn last line (a crash mid-append) does not lose the rest.
 */
export function replayJsonl<T>(file: string, apply: (value: T) => void, warn: (message: string) => void): void {
  if (!existsSync(file)) return;
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, index) => {
    if (!line.trim()) return;
    try {
      apply(JSON.parse(line) as T);
    } catch (err) {
      warn(`sandbox file ${file}: line ${index + 1} ignored (${(err as Error).message})`);
    }
  });
}

/** A JSONL file written synchronously: when `append` returns, the line is on its way to the disk. */
export class JsonlFile<T> {
  private prepared = false;

  constructor(readonly file: string) {}

  private prepare(): void {
    if (this.prepared) return;
    ensurePrivateDirectory(dirname(this.file));
    try {
      if (existsSync(this.file)) chmodSync(this.file, 0o600);
    } catch {
      // not ours to change: reading and appending still work or fail on their own
    }
    this.prepared = true;
  }

  replay(apply: (value: T) => void, warn: (message: string) => void): void {
    this.prepare();
    replayJsonl(this.file, apply, warn);
  }

  append(value: T): void {
    this.prepare();
    appendFileSync(this.file, `${JSON.stringify(value)}\n`, { mode: 0o600 });
  }
}
