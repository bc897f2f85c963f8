import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest, type NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { type AbrasfSandboxProfile, createAbrasfService } from '../../src/sandbox/abrasf-v2/index.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { invoiceBody } from '../support/onboarding.ts';
import type { ConformanceEnvironment } from './suite.ts';

/** What the ABRASF 2.0x conformance runs share: the provider's sandbox on the kit's HTTPS server. */

export function normalized(profile: ProjectFiscalProfile, overrides: Record<string, unknown> = {}): NormalizedInvoice {
  const checked = checkInvoiceRequest(invoiceBody(overrides) as InvoiceRequest, profile);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.value;
}

export async function startAbrasfSandbox(
  profile: AbrasfSandboxProfile,
  project: ProjectFiscalProfile,
  holdMs = 0,
): Promise<ConformanceEnvironment & { url: string }> {
  const dir = await mkdtemp(join(tmpdir(), `conformance-${profile.slug}-`));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  const ca = createCertificateAuthority('AC Teste ICP-Brasil');
  const files = createA1Certificate({ cnpj: project.cnpj, name: project.razaoSocial, password: 'x', issuer: ca });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  const service = createAbrasfService(profile, {
    signer: identity.signer,
    now: () => new Date(),
    logger: { info: () => {}, warn: () => {} },
    dataDir: dir,
    holdMs,
  });
  const server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [service],
  });
  const base = (ambiente: 1 | 2) =>
    `${server.url}/municipal/${profile.slug}/${ambiente === 1 ? 'producao' : 'producaorestrita'}`;
  return {
    url: server.url,
    endpoints: { url: (_operation, ambiente) => base(ambiente) },
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

/**
 * The target of a conformance run: the project, its invoice, the business rejection of a lote or RPS whose prestador
 * is a stranger (another CNPJ: `code`), and the sandbox `start`.
 */
export function strangerRejectionTarget(
  project: ProjectFiscalProfile,
  code: string,
  start: () => Promise<ConformanceEnvironment>,
) {
  const stranger = { ...project, cnpj: '45723174000110' };
  return {
    project,
    invoice: () => normalized(project),
    rejection: { project: stranger, invoice: normalized(stranger), code },
    start,
  };
}
