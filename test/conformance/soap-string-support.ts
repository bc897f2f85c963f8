import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest, type NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { startSandboxServer } from '../../src/sandbox/kit/server.ts';
import type { MunicipalSandbox } from '../../src/sandbox/municipal.ts';
import { invoiceBody } from '../support/onboarding.ts';
import type { ConformanceEnvironment } from './suite.ts';

/** The conformance environment of a string-SOAP provider: its municipal sandbox alone on a kit server. */

export function normalized(profile: ProjectFiscalProfile, overrides: Record<string, unknown> = {}): NormalizedInvoice {
  const checked = checkInvoiceRequest(invoiceBody(overrides) as InvoiceRequest, profile);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.value;
}

export async function startMunicipalSandbox(
  sandbox: MunicipalSandbox,
  project: ProjectFiscalProfile,
): Promise<ConformanceEnvironment & { url: string }> {
  const dir = await mkdtemp(join(tmpdir(), `conformance-${sandbox.slug}-`));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  const ca = createCertificateAuthority('AC Teste ICP-Brasil');
  const files = createA1Certificate({ cnpj: project.cnpj, name: project.razaoSocial, password: 'x', issuer: ca });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  const server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [
      sandbox.create({
        signer: identity.signer,
        now: () => new Date(),
        logger: { info: () => {}, warn: () => {} },
        dataDir: join(dir, 'data'),
      }),
    ],
  });
  return {
    url: server.url,
    endpoints: {
      url: (_operation, ambiente) =>
        `${server.url}/municipal/${sandbox.slug}/${ambiente === 1 ? 'producao' : 'producaorestrita'}`,
    },
    caPem: identity.caPem,
    certificate: read.value,
    async setFaults(faults) {
      server.setFaults(faults);
    },
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
