import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { municipalSandboxPathIn } from '../../src/sandbox/mount-path.ts';
import { MUNICIPAL_SANDBOXES, MUNICIPAL_SANDBOX_MOUNTS, municipalSandboxPath } from '../../src/sandbox/municipal.ts';
import { type SandboxProcess, startSandboxProcess } from '../../src/sandbox/process.ts';

/**
 * `npm start` runs the sandboxes in a process of their own and does not load their modules: the sandbox process
 * reports where each municipal provider's sandbox is mounted, and the service builds its engines' URLs from that.
 */
const dir = mkdtempSync(join(tmpdir(), 'nfse-sandbox-mounts-'));
let child: SandboxProcess | null = null;
afterAll(async () => {
  await child?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sandbox mounts', () => {
  it('the sandbox process reports every municipal sandbox, each at the path the in-process table gives', async () => {
    child = await startSandboxProcess({ dir, logger: { info: () => undefined, warn: () => undefined } });
    expect(child.mounts).toEqual(MUNICIPAL_SANDBOX_MOUNTS);
    expect(Object.keys(child.mounts)).toHaveLength(MUNICIPAL_SANDBOXES.length);
    for (const sandbox of MUNICIPAL_SANDBOXES) {
      for (const ambiente of [1, 2] as const) {
        const path = municipalSandboxPathIn(child.mounts, sandbox.engine, ambiente);
        expect(path).toBe(`/municipal/${sandbox.slug}/${ambiente === 1 ? 'producao' : 'producaorestrita'}`);
        expect(path).toBe(municipalSandboxPath(sandbox.engine, ambiente));
      }
    }
  });

  it('an engine without a sandbox gets its key as the slug', () => {
    expect(municipalSandboxPathIn({}, 'own-layout:nowhere', 2)).toBe('/municipal/own-layout-nowhere/producaorestrita');
  });
});
