import { ConfigError, loadConfig } from './config.ts';
import { startService } from './service.ts';

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

const service = await startService(config);
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
