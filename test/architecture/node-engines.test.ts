import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * The Node versions `package.json` promises (`engines.node`) must be ones every installed dependency declares it
 * runs on: the promise's lowest version and the first release of every later major it admits (up to the newest
 * LTS line we test on) must satisfy each dependency's own `engines.node`.
 */
const root = resolve(import.meta.dirname, '../..');
const promised = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node as string;
const NEWEST_MAJOR_CHECKED = 24;

function installedPackages(): { name: string; engines: string }[] {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<
      string,
      { engines?: { node?: string } | string[]; optional?: boolean; os?: string[]; cpu?: string[] }
    >;
  };
  const found: { name: string; engines: string }[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || !path.includes('node_modules/')) continue;
    const engines = entry.engines;
    if (!engines || Array.isArray(engines) || !engines.node) continue;
    // an optional platform package for another OS or CPU (esbuild's win32 build, rolldown's wasm32 binding) is
    // never installed on a machine that runs the service
    if (entry.optional && entry.os && !entry.os.includes(process.platform)) continue;
    if (entry.optional && entry.cpu && !entry.cpu.includes(process.arch)) continue;
    found.push({ name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), engines: engines.node });
  }
  return found;
}

function versionsPromised(): string[] {
  const lowest = semver.minVersion(promised);
  if (!lowest) throw new Error(`engines.node ${promised} admits no version`);
  const versions = [lowest.version];
  for (let major = lowest.major + 1; major <= NEWEST_MAJOR_CHECKED; major++) {
    if (semver.satisfies(`${major}.0.0`, promised)) versions.push(`${major}.0.0`);
  }
  return versions;
}

describe('Node versions promised in package.json', () => {
  it('are a valid range with a lowest version', () => {
    expect(semver.validRange(promised)).not.toBeNull();
    expect(versionsPromised().length).toBeGreaterThan(0);
  });

  it("are within every dependency's engines.node", () => {
    const packages = installedPackages();
    expect(packages.length).toBeGreaterThan(50);
    const conflicts = packages.flatMap(({ name, engines }) =>
      versionsPromised()
        .filter((version) => !semver.satisfies(version, engines))
        .map((version) => `${name} (engines.node ${engines}) refuses Node ${version}`),
    );
    expect(conflicts).toEqual([]);
  });

  it('include the Node these machines run the suite on, or the README says why not', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    if (!semver.satisfies(process.version, promised)) {
      expect(readme).toContain(`Node.js ${semver.minVersion(promised)?.version}`);
      expect(readme).toMatch(/Node\.js 20[\s\S]{0,120}outside the promise/);
    }
  });
});

// The lock file lists what `npm ci` installs; the folder must agree, or the check above read the wrong tree.
it('reads the installed tree', () => {
  expect(readdirSync(join(root, 'node_modules')).length).toBeGreaterThan(50);
});
