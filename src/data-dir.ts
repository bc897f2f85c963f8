import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * DATA_DIR holds the database, the generated keys, the documents and the sandbox's keys: it is private to the
 * service's user whatever the umask it was started with. The process umask becomes 077 (so every file and
 * directory created from now on, by us or by the embedded database, is 0600/0700), and what already exists under
 * the directory (an older installation, a copied database) is brought to 0700/0600.
 */
export function securePrivateDirectory(dir: string): void {
  process.umask(0o077);
  restrict(dir);
}

function restrict(path: string): void {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat || stat.isSymbolicLink()) return; // a link's target is not ours to change
  if (stat.isDirectory()) {
    if ((stat.mode & 0o777) !== 0o700) chmodSync(path, 0o700);
    for (const entry of readdirSync(path)) restrict(join(path, entry));
  } else if ((stat.mode & 0o077) !== 0) {
    chmodSync(path, stat.mode & 0o700 ? (stat.mode & 0o700) | 0o600 : 0o600);
  }
}
