import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import type { AbrasfSandboxOptions } from '../../src/sandbox/abrasf-v2/service.ts';
import type { AbrasfSandboxProfile } from '../../src/sandbox/abrasf-v2/profiles.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { type SandboxService, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import type { ConformanceEnvironment } from './suite.ts';

/**
 * An ABRASF sandbox whose service is the generic one behind a provider's own layer (IPM's atende.net idiom,
 * ISSLegal's Authorization key): `create` builds the service from the profile, as the municipal registration does.
 */
export async function startWrappedAbrasfSandbox(
  profile: AbrasfSandboxProfile,
  project: ProjectFiscalProfile,
  create: (profile: AbrasfSandboxProfile, options: AbrasfSandboxOptions) => SandboxService,
): Promise<ConformanceEnvironment> {
  const dir = await mkdtemp(join(tmpdir(), `conformance-${profile.slug}-`));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  const files = createA1Certificate({
    cnpj: project.cnpj,
    name: project.razaoSocial,
    password: 'x',
    issuer: createCertificateAuthority('AC Teste ICP-Brasil'),
  });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  const service = create(profile, {
    signer: identity.signer,
    now: () => new Date(),
    logger: { info: () => {}, warn: () => {} },
    dataDir: dir,
    holdMs: 0,
  });
  const server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [service],
  });
  const base = (ambiente: 1 | 2) =>
    `${server.url}/municipal/${profile.slug}/${ambiente === 1 ? 'producao' : 'producaorestrita'}`;
  return {
    endpoints: { url: (_operation, ambiente) => base(ambiente) },
    caPem: identity.caPem,
    certificate: read.value,
    setFaults: async (faults) => server.setFaults(faults),
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
