import { spawnSync } from 'node:child_process';

const cache = new Map<string, boolean>();

/** Whether an external command-line tool is installed (`.ci/run` installs them on CI machines). */
export function hasTool(name: string): boolean {
  let found = cache.get(name);
  if (found === undefined) {
    found = spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
    cache.set(name, found);
  }
  return found;
}
