import { ConfigError, loadConfig } from './config.ts';
import { DataDirectoryInUseError } from './db/client.ts';
import { type RunningService, startService } from './service.ts';

let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    console.error(`Configuration error: ${err.message}`);
    process.exit(78);
  }
  throw err;
}

/** One line for the start-up failures an operator can fix (port taken, data directory held, database down…). */
function startupFailure(err: unknown): string {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  const where = `${config.host}:${config.port}`;
  if (e?.code === 'EADDRINUSE')
    return `port ${config.port} is already in use on ${config.host} (set PORT to a free port)`;
  if (e?.code === 'EACCES' && e.syscall === 'listen')
    return `no permission to listen on ${where} (set PORT above 1023)`;
  if (e?.code === 'EADDRNOTAVAIL') return `cannot listen on ${where}: no such local address (check HOST)`;
  if (err instanceof DataDirectoryInUseError) return err.message;
  if (e?.code === 'ECONNREFUSED' && config.databaseUrl)
    return `cannot connect to the database of DATABASE_URL (${e.message})`;
  return e instanceof Error ? e.message : String(err);
}

let service: RunningService;
try {
  service = await startService(config, { sandboxProcess: true });
} catch (err) {
  console.error(`Cannot start the NFS-e service: ${startupFailure(err)}`);
  if (['debug', 'trace'].includes(config.logLevel)) console.error(err);
  process.exit(1);
}
if (service.url)
  service.ctx.logger.info(`NFS-e service listening on ${service.url}/api/v1 (docs at ${service.url}/docs)`);
else service.ctx.logger.info(`NFS-e worker started (role ${config.role})`);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  service.ctx.logger.info({ signal }, 'shutting down: no new requests, finishing in-flight work');
  const timer = setTimeout(() => {
    service.ctx.logger.error('shutdown took too long; exiting');
    process.exit(1);
  }, 30_000);
  timer.unref();
  await service.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
