import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { SandboxMounts } from './mount-path.ts';

/**
 * The local government sandboxes in a process of their own (what `npm start` does): the sandboxes validate XSDs,
 * verify and make signatures and compose notes — CPU the service's event loop must not share with its API intake
 * (issue "Performance as users run it"). The child is `src/sandbox/main.ts` (the `npm run sandbox` entry), started
 * on a free port; it reports its URL over the IPC channel and exits when the service goes away (even on kill -9,
 * through the channel's disconnect).
 */

export interface SandboxProcess {
  url: string;
  caPem: string;
  /** where each municipal provider's sandbox is mounted (engine key → slug), as the sandbox process reported */
  mounts: SandboxMounts;
  pid: number;
  close(): Promise<void>;
}

interface ReadyMessage {
  type: 'sandbox-ready';
  url: string;
  caFile: string;
  mounts: SandboxMounts;
}

const READY_TIMEOUT_MS = 60_000;
/**
 * The sandboxes stand in for the government's servers, which are not on the user's machine: once ready (its start
 * runs at full priority, beside the service's), the child yields the CPU to the service like the forked worker does
 * (nice 10), so a burst of API requests is not slowed by the sandboxes composing the notes in flight.
 */
export const SANDBOX_NICE = 10;

export function startSandboxProcess(options: {
  dir: string;
  logger: { info(message: string): void; warn(message: string): void };
}): Promise<SandboxProcess> {
  const fromSources = import.meta.url.endsWith('.ts');
  const entry = fileURLToPath(new URL(fromSources ? './main.ts' : './main.js', import.meta.url));
  const child: ChildProcess = fork(entry, [], {
    env: { ...process.env, SANDBOX_PORT: '0', SANDBOX_HOST: '127.0.0.1', SANDBOX_DIR: options.dir, SANDBOX_QUIET: '1' },
    execArgv: fromSources ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const forward = (level: 'info' | 'warn') => (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) options.logger[level](`sandbox: ${line}`);
  };
  child.stdout?.on('data', forward('info'));
  child.stderr?.on('data', forward('warn'));

  return new Promise<SandboxProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the sandbox process did not start within ${READY_TIMEOUT_MS / 1000} s`));
    }, READY_TIMEOUT_MS);
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox process exited before it was ready (code ${code}, signal ${signal})`));
    };
    child.once('exit', onExit);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('message', (message: ReadyMessage) => {
      if (message?.type !== 'sandbox-ready') return;
      clearTimeout(timer);
      child.off('exit', onExit);
      try {
        if (child.pid) setPriority(child.pid, SANDBOX_NICE);
      } catch {
        /* not permitted here: same priority */
      }
      let closing = false;
      child.on('exit', (code, signal) => {
        if (!closing) options.logger.warn(`sandbox process exited (code ${code}, signal ${signal})`);
      });
      resolve({
        url: message.url,
        caPem: readFileSync(message.caFile, 'utf8'),
        mounts: message.mounts,
        pid: child.pid ?? 0,
        close: () =>
          new Promise<void>((done) => {
            if (closing || child.exitCode !== null || child.signalCode !== null) return done();
            closing = true;
            const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
