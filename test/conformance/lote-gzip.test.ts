import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest, type NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { cittaFamily } from '../../src/engines/dps-provider/citta.ts';
import { pronimFamily } from '../../src/engines/dps-provider/pronim.ts';
import type { FamilyDefinition } from '../../src/engines/kit/family.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { CITTA_PROFILE, type LoteGzipProfile, PRONIM_PROFILE } from '../../src/sandbox/lote-gzip/profiles.ts';
import { createLoteGzipService } from '../../src/sandbox/lote-gzip/service.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { invoiceBody } from '../support/onboarding.ts';
import { type ConformanceEnvironment, describeConformance } from './suite.ts';

/**
 * The `LoteXmlGZipB64` providers against their sandbox (src/sandbox/lote-gzip/), in homologation: Pronim in
 * Alvinópolis/MG (3102308, not adherent to the national environment) and Citta in Casca/RS (4304903, the Citta
 * cities with a production URL are the only ones routed to it). A regime-1 provider with the IBS/CBS defaults, as
 * onboarded; the business rejection is a production DPS sent to homologation (E0006).
 */

function normalized(profile: ProjectFiscalProfile): NormalizedInvoice {
  const checked = checkInvoiceRequest(invoiceBody() as InvoiceRequest, profile);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.value;
}

function projectIn(codigoMunicipio: string): ProjectFiscalProfile {
  return fiscalProfile({
    ambiente: 2,
    codigoMunicipio,
    inscricaoMunicipal: '12345',
    endereco: {
      logradouro: 'Rua Exemplo',
      numero: '100',
      complemento: null,
      bairro: 'Centro',
      cidade: null,
      uf: null,
      cep: '35000000',
    },
    ...IBS_CBS_FRAMING,
  });
}

function describeProvider(family: FamilyDefinition, profile: LoteGzipProfile, codigoMunicipio: string): void {
  const project = projectIn(codigoMunicipio);
  const production = { ...project, ambiente: 1 as const };
  describeConformance({
    family,
    project,
    invoice: () => normalized(project),
    rejection: { project: production, invoice: normalized(production), code: 'E0006' },
    async start(): Promise<ConformanceEnvironment> {
      const dir = await mkdtemp(join(tmpdir(), `conformance-${profile.slug}-`));
      const identity = provisionSandboxIdentity(join(dir, 'identity'));
      const ca = createCertificateAuthority('AC Teste ICP-Brasil');
      const files = createA1Certificate({ cnpj: project.cnpj, name: project.razaoSocial, password: 'x', issuer: ca });
      const read = readPkcs12(files.pfx, files.password);
      if (!read.ok) throw new Error(read.error.message);
      const server = await startSandboxServer({
        transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
        services: [
          createLoteGzipService(profile, {
            signer: identity.signer,
            now: () => new Date(),
            logger: { info: () => {}, warn: () => {} },
            dataDir: dir,
          }),
        ],
      });
      return {
        endpoints: {
          url: (_operation, ambiente) =>
            `${server.url}/municipal/${profile.slug}/${ambiente === 1 ? 'producao' : 'producaorestrita'}`,
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
}

describeProvider(pronimFamily, PRONIM_PROFILE, '3102308');
describeProvider(cittaFamily, CITTA_PROFILE, '4304903');
