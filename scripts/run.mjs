#!/usr/bin/env node
/**
 * Runs a compiled entry point from dist/ in this very process: `node scripts/run.mjs src/main.ts [args…]`
 * (what `npm start`, `worker`, `migrate`, `admin` and `sandbox` do). If the sources changed since the last build
 * (a `git pull` without `npm ci`), it rebuilds first; with no TypeScript installed it says so and stops.
 * The entry sees the usual `process.argv` ([node, entry, args…]) and receives the signals sent to this process.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, buildIsFresh, dist } from './build.mjs';

const entry = process.argv[2];
if (!entry?.startsWith('src/') || !entry.endsWith('.ts')) {
  console.error('usage: node scripts/run.mjs src/<entry>.ts [args…]');
  process.exit(64);
}
if (!buildIsFresh()) {
  console.error('dist/ is missing or older than the sources: building (npm run build)…');
  try {
    await build({ quiet: true });
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(70);
  }
}
const compiled = join(dist, entry.replace(/\.ts$/, '.js'));
process.argv.splice(1, 2, compiled);
await import(pathToFileURL(compiled).href);
