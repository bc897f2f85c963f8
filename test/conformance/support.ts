import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { type Agent, request } from 'undici';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest, type NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import type { SandboxSigner } from '../../src/sandbox/kit/xml-signature.ts';
import { type SandboxService, startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { invoiceBody } from '../support/onboarding.ts';
import type { ConformanceEnvironment } from './suite.ts';

/** The normalised invoice of the standard test body (`invoiceBody`) for a project, as the API edge makes it. */
export function normalizedInvoice(
  profile: ProjectFiscalProfile,
  overrides: Record<string, unknown> = {},
): NormalizedInvoice {
  const checked = checkInvoiceRequest(invoiceBody(overrides) as InvoiceRequest, profile);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.value;
}

/**
 * One municipal provider's sandbox service on its own HTTPS server (client certificates requested), with a fresh
 * sandbox identity and the project's A1 certificate issued by a test CA: the environment of a conformance run.
 */
export async function startProviderSandbox(options: {
  slug: string;
  project: ProjectFiscalProfile;
  service: (deps: { signer: SandboxSigner; dataDir: string }) => SandboxService;
}): Promise<ConformanceEnvironment> {
  const dir = await mkdtemp(join(tmpdir(), `conformance-${options.slug}-`));
  const identity = provisionSandboxIdentity(join(dir, 'identity'));
  const ca = createCertificateAuthority('AC Teste ICP-Brasil');
  const { project } = options;
  const files = createA1Certificate({ cnpj: project.cnpj, name: project.razaoSocial, password: 'x', issuer: ca });
  const read = readPkcs12(files.pfx, files.password);
  if (!read.ok) throw new Error(read.error.message);
  const server = await startSandboxServer({
    transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
    services: [options.service({ signer: identity.signer, dataDir: dir })],
  });
  return {
    endpoints: {
      url: (_operation, ambiente) =>
        `${server.url}/municipal/${options.slug}/${ambiente === 1 ? 'producao' : 'producaorestrita'}`,
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

/**
 * POSTs a SOAP 1.1 envelope whose Body holds `call` (the operation element, as XML) with the given SOAPAction, over
 * `dispatcher` (the sandbox's CA and the client certificate); the status and the text of the answer.
 */
export async function postSoap11(url: string, dispatcher: Agent, call: string, soapAction: string) {
  const answer = await request(url, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${soapAction}"` },
    body: `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${call}</s:Body></s:Envelope>`,
  });
  return { status: answer.statusCode, text: await answer.body.text() };
}
