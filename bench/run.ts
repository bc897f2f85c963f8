/**
 * Runs every benchmark and prints its figures (they are scripts, never timed tests).
 *   npm run bench                 (PostgreSQL at BENCH_DATABASE_URL / DATABASE_URL / 127.0.0.1:5432 test)
 */
import { spawnSync } from 'node:child_process';

const ROOT = new URL('../', import.meta.url).pathname;
const benches = [
  ['bench/signing.ts'],
  ['bench/danfse.ts'],
  ['bench/start.ts'],
  ['bench/api.ts', '8', '32'],
  ['bench/intake.ts', '8', '32'],
  ['bench/issuing.ts', '1000', '128'],
  ['bench/webhooks.ts'],
  // embedded defaults (PGlite) unless DATABASE_URL is set
  ['bench/batch.ts', '3'],
];
for (const [script, ...args] of benches) {
  console.log(`\n# ${script} ${args.join(' ')}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', script!, ...args], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) console.log(`(${script} exited with ${r.status})`);
}
