import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest, type NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { bethaFamily } from '../../src/engines/dps-provider/betha.ts';
import { createBethaService } from '../../src/sandbox/betha/service.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { invoiceBody } from '../support/onboarding.ts';
import { type ConformanceEnvironment, describeConformance } from './suite.ts';

/**
 * Betha against its sandbox, in Acrelândia/AC (1200013, a Betha city not adherent to the national emitter), a
 * Simples Nacional provider (regime 3). The sandbox holds each submission for `holdMs` = 0 here: the emission still
 * answers `pending` with a protocol (the engine never gets a note from RecepcionarDps), and the first status query
 * processes it; the wait itself ("Aguardando validação do ambiente nacional") is covered by test/sandbox/betha.test.ts.
 * The business rejection: a DPS whose provider is not the certificate's holder (E0718, refused synchronously).
 */
const project = fiscalProfile({ ambiente: 2, codigoMunicipio: '1200013', regimeTributario: '3', aliquotaSimples: 6 });
const stranger = { ...project, cnpj: '45723174000110' };

function normalized(profile: ProjectFiscalProfile, overrides: Record<string, unknown> = {}): NormalizedInvoice {
  const checked = checkInvoiceRequest(invoiceBody(overrides) as InvoiceRequest, profile);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.value;
}

describeConformance({
  family: bethaFamily,
  project,
  invoice: () => normalized(project),
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E0718' },
  async start(): Promise<ConformanceEnvironment> {
    const dir = await mkdtemp(join(tmpdir(), 'conformance-betha-'));
    const identity = provisionSandboxIdentity(join(dir, 'identity'));
    const ca = createCertificateAuthority('AC Teste ICP-Brasil');
    const files = createA1Certificate({ cnpj: project.cnpj, name: project.razaoSocial, password: 'x', issuer: ca });
    const read = readPkcs12(files.pfx, files.password);
    if (!read.ok) throw new Error(read.error.message);
    const service = createBethaService({
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
    return {
      endpoints: {
        url: (_operation, ambiente) =>
          `${server.url}/municipal/betha/${ambiente === 1 ? 'producao' : 'producaorestrita'}`,
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
  },
});
