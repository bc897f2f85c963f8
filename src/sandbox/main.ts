import { resolve } from 'node:path';
import { prefetchRsaKeys } from '../certificates/generate.ts';
import { provisionSandboxIdentity, sandboxIdentityMissing } from './identity.ts';

/**
 * `npm run sandbox`: the national family's sandbox (Sefin Nacional + ADN Parâmetros Municipais) on its own, recording
 * its exchanges in `$SANDBOX_DIR/national/exchanges.jsonl`.
 * Env: SANDBOX_PORT (default 8443), SANDBOX_HOST (default 127.0.0.1), SANDBOX_DIR (default ./data/sandbox).
 */

const port = Number(process.env.SANDBOX_PORT ?? 8443);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`SANDBOX_PORT must be a port number, got ${process.env.SANDBOX_PORT}`);
  process.exit(2);
}
const host = process.env.SANDBOX_HOST ?? '127.0.0.1';
const dir = resolve(process.env.SANDBOX_DIR ?? './data/sandbox');

// a first start makes three RSA keys: generated in parallel on the thread pool while the sandboxes' modules load
const keys = sandboxIdentityMissing(dir) ? prefetchRsaKeys(3) : null;
const { startSefinSandbox } = await import('./sefin/server.ts');
await keys;
const identity = provisionSandboxIdentity(dir);
const sandbox = await startSefinSandbox({
  host,
  port,
  tls: identity.tls,
  signer: identity.signer,
  storeFile: resolve(dir, 'sefin-store.jsonl'),
  sandboxDir: dir,
  logger: {
    info: (message) => console.log(message),
    warn: (message) => console.warn(message),
  },
}).catch((err: NodeJS.ErrnoException) => {
  // what an operator can fix is one line, not a stack trace (as for the service, src/main.ts)
  const reason =
    err?.code === 'EADDRINUSE'
      ? `port ${port} is already in use on ${host} (set SANDBOX_PORT to a free port)`
      : err?.code === 'EACCES'
        ? `no permission to listen on ${host}:${port} (set SANDBOX_PORT above 1023)`
        : err?.code === 'EADDRNOTAVAIL'
          ? `cannot listen on ${host}:${port}: no such local address (check SANDBOX_HOST)`
          : null;
  if (!reason) throw err;
  console.error(`Cannot start the sandbox: ${reason}`);
  process.exit(1);
});

/** Started by the service (`npm start`, src/sandbox/process.ts): report over IPC, quit when the service goes away. */
const supervised = typeof process.send === 'function';
if (supervised) {
  const { MUNICIPAL_SANDBOX_MOUNTS } = await import('./municipal.ts');
  process.send?.({
    type: 'sandbox-ready',
    url: sandbox.url,
    caFile: identity.caFile,
    mounts: MUNICIPAL_SANDBOX_MOUNTS,
  });
  process.on('disconnect', () => {
    sandbox.close().finally(() => process.exit(0));
  });
}
if (!process.env.SANDBOX_QUIET) printBanner();

function printBanner() {
  console.log(`Sefin Nacional sandbox listening on ${sandbox.url}`);
  console.log(`  produção:          ${sandbox.url}/producao/SefinNacional`);
  console.log(`  produção restrita: ${sandbox.url}/producaorestrita/SefinNacional`);
  console.log(
    `  ADN Parâmetros Municipais: ${sandbox.url}/{producao,producaorestrita}/parametrizacao (seed: GET ${sandbox.url}/__sandbox/adn)`,
  );
  console.log(`  CA certificate:    ${identity.caFile}`);
  console.log(`  faults:            PUT ${sandbox.url}/__sandbox/faults   issued: GET ${sandbox.url}/__sandbox/issued`);
  console.log(`  exchanges:         ${sandbox.exchangesFile()}`);
}

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    sandbox.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
