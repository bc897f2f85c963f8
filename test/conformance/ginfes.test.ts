import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest, type NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { ginfesFamily } from '../../src/engines/ginfes/family.ts';
import { createGinfesService } from '../../src/sandbox/ginfes/service.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { invoiceBody } from '../support/onboarding.ts';
import { type ConformanceEnvironment, describeConformance } from './suite.ts';

/**
 * GINFES against its sandbox, in Guarulhos/SP (3518800), a Simples Nacional provider with the CNAE GINFES requires. The sandbox holds a lote
 * for `holdMs` = 0 here: the emission answers `pending` with a Protocolo, the first ConsultarSituacaoLoteRps
 * processes it (Situacao 4) and ConsultarLoteRps returns the NFS-e. The business rejection: a lote whose prestador
 * is not the certificate's holder (E157, refused at reception).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3518800',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
  cnae: '6201501',
});
const stranger = { ...project, cnpj: '45723174000110' };

function normalized(profile: ProjectFiscalProfile, overrides: Record<string, unknown> = {}): NormalizedInvoice {
  const checked = checkInvoiceRequest(invoiceBody(overrides) as InvoiceRequest, profile);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.value;
}

describeConformance({
  family: ginfesFamily,
  project,
  invoice: () => normalized(project),
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E157' },
  async start(): Promise<ConformanceEnvironment> {
    const dir = await mkdtemp(join(tmpdir(), 'conformance-ginfes-'));
    const identity = provisionSandboxIdentity(join(dir, 'identity'));
    const ca = createCertificateAuthority('AC Teste ICP-Brasil');
    const files = createA1Certificate({ cnpj: project.cnpj, name: project.razaoSocial, password: 'x', issuer: ca });
    const read = readPkcs12(files.pfx, files.password);
    if (!read.ok) throw new Error(read.error.message);
    const service = createGinfesService({
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
          `${server.url}/municipal/ginfes/${ambiente === 1 ? 'producao' : 'producaorestrita'}`,
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
