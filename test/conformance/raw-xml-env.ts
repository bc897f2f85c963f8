import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { type A1Certificate, readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest, type NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import type { EngineFamily, PreparedDocument } from '../../src/engines/types.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import type { MunicipalSandboxDependencies } from '../../src/sandbox/municipal.ts';
import { type SandboxService, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { invoiceBody } from '../support/onboarding.ts';
import type { ConformanceEnvironment } from './suite.ts';

/** A valid normalised invoice of a project. */
export function normalized(profile: ProjectFiscalProfile, overrides: Record<string, unknown> = {}): NormalizedInvoice {
  const checked = checkInvoiceRequest(invoiceBody(overrides) as InvoiceRequest, profile);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.value;
}

/**
 * A raw-XML provider's sandbox service on its own kit server (HTTPS, client certificates requested), the provider's
 * A1 certificate, and `settings` applied through the service's admin route as an operator would.
 */
export async function startRawXmlSandbox(options: {
  project: ProjectFiscalProfile;
  slug: string;
  create: (deps: MunicipalSandboxDependencies) => SandboxService;
  settings?: { path: string; body: unknown };
}): Promise<ConformanceEnvironment & { url: string; admin: Agent }> {
  const dir = await mkdtemp(join(tmpdir(), `conformance-${options.slug}-`));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  const ca = createCertificateAuthority('AC Teste ICP-Brasil');
  const files = createA1Certificate({
    cnpj: options.project.cnpj,
    name: options.project.razaoSocial,
    password: 'x',
    issuer: ca,
  });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  const service = options.create({
    signer: identity.signer,
    now: () => new Date(),
    logger: { info: () => {}, warn: () => {} },
    dataDir: join(dir, 'data'),
  });
  const server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [service],
  });
  const admin = new Agent({ connect: { key: read.value.keyPem, cert: read.value.certPem, ca: identity.caPem } });
  const put = async (path: string, body: unknown) => {
    const res = await request(`${server.url}${path}`, {
      method: 'PUT',
      dispatcher: admin,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${path}: HTTP ${res.statusCode}`);
  };
  if (options.settings) await put(options.settings.path, options.settings.body);
  return {
    url: server.url,
    admin,
    endpoints: {
      url: (_operation, ambiente) =>
        `${server.url}/municipal/${options.slug}/${ambiente === 1 ? 'producao' : 'producaorestrita'}`,
    },
    caPem: identity.caPem,
    certificate: read.value,
    setFaults: (faults) => put('/__sandbox/faults', faults),
    async close() {
      await admin.close();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The engine's prepared document (built, signed, validated) of the standard invoice (or `invoice`), serie 1, numbered
 * `number`, issued a minute ago; a refusal throws.
 */
export function preparedDocument(
  engine: Pick<EngineFamily, 'prepare'>,
  input: { project: ProjectFiscalProfile; certificate: A1Certificate; number: number; invoice?: NormalizedInvoice },
): PreparedDocument {
  const prepared = engine.prepare({
    project: input.project,
    invoice: input.invoice ?? normalized(input.project),
    serie: '1',
    number: input.number,
    issuedAt: new Date(Date.now() - 60_000),
    certificate: input.certificate,
  });
  if (prepared.kind !== 'ok') throw new Error(JSON.stringify(prepared));
  return prepared.value;
}
