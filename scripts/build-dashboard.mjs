#!/usr/bin/env node
/**
 * Builds the dashboard front-end (web/, plain TypeScript and DOM) with Vite into `<outDir>` (dist/dashboard/ by
 * default; scripts/build.mjs builds it into the new dist/ it assembles). Served at /dashboard by
 * src/http/routes/dashboard/serve-app.ts. Plain JavaScript: runs without tsx.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const webRoot = join(root, 'web');

export async function buildDashboard(outDir = join(root, 'dist', 'dashboard')) {
  let vite;
  try {
    vite = await import('vite');
  } catch {
    throw new Error('Vite is not installed (a production install without dev dependencies?): run `npm ci`.');
  }
  await vite.build({
    configFile: false,
    root: webRoot,
    base: '/dashboard/',
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true, assetsDir: 'assets', target: 'es2022', reportCompressedSize: false },
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = Date.now();
  await buildDashboard(process.argv[2]);
  console.log(`built the dashboard in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
