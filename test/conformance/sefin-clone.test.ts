import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { checkInvoiceRequest, type InvoiceRequest, type NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { DPS_PROVIDER_DEFINITIONS } from '../../src/engines/dps-provider/index.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { startSandboxServer } from '../../src/sandbox/kit/server.ts';
import { createSefinCloneService, type SefinCloneSlug } from '../../src/sandbox/sefin-clone/service.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { invoiceBody } from '../support/onboarding.ts';
import { type ConformanceEnvironment, describeConformance } from './suite.ts';

/**
 * The Sefin-clone providers (SimplISS, RLZ, Infisc, Tiplan: src/engines/dps-provider/sefin-clone.ts) against their sandbox
 * (src/sandbox/sefin-clone/), each with a Simples Nacional provider (regime 3) in one of its non-adherent cities,
 * in homologation. The business rejection is Sefin's: a production DPS (tpAmb 1) sent to homologation, E0006.
 */
const CASES: { slug: SefinCloneSlug; codigoMunicipio: string }[] = [
  { slug: 'simpliss', codigoMunicipio: '3148103' }, // Patrocínio/MG
  { slug: 'rlz', codigoMunicipio: '3505500' }, // Barretos/SP
  { slug: 'infisc', codigoMunicipio: '4305108' }, // Caxias do Sul/RS
  { slug: 'tiplan', codigoMunicipio: '3302403' }, // Macaé/RJ (its own paths: /api/adn/dps/recepcao|evento|chave-acesso)
];

function normalized(profile: ProjectFiscalProfile): NormalizedInvoice {
  const checked = checkInvoiceRequest(invoiceBody() as InvoiceRequest, profile);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return checked.value;
}

for (const { slug, codigoMunicipio } of CASES) {
  const family = DPS_PROVIDER_DEFINITIONS[`dps-provider:${slug}`];
  if (!family) throw new Error(`dps-provider:${slug} is not registered`);
  const project = fiscalProfile({ ambiente: 2, codigoMunicipio, regimeTributario: '3', aliquotaSimples: 6 });

  describeConformance({
    family,
    project,
    invoice: () => normalized(project),
    rejection: {
      project: { ...project, ambiente: 1 },
      invoice: normalized({ ...project, ambiente: 1 }),
      code: 'E0006',
    },
    async start(): Promise<ConformanceEnvironment> {
      const dir = await mkdtemp(join(tmpdir(), `conformance-${slug}-`));
      const identity = provisionSandboxIdentity(join(dir, 'identity'));
      const ca = createCertificateAuthority('AC Teste ICP-Brasil');
      const files = createA1Certificate({ cnpj: project.cnpj, name: project.razaoSocial, password: 'x', issuer: ca });
      const read = readPkcs12(files.pfx, files.password);
      if (!read.ok) throw new Error(read.error.message);
      const server = await startSandboxServer({
        transport: { kind: 'https', tls: identity.tls, clientCertificates: 'requested' },
        services: [
          createSefinCloneService(slug, {
            signer: identity.signer,
            now: () => new Date(),
            logger: { info: () => {}, warn: () => {} },
            dataDir: dir,
          }),
        ],
        sandboxDir: dir,
      });
      const admin = new Agent({ connect: { key: read.value.keyPem, cert: read.value.certPem, ca: identity.caPem } });
      return {
        endpoints: {
          url: (_operation, ambiente) =>
            `${server.url}/municipal/${slug}/${ambiente === 1 ? 'producao' : 'producaorestrita'}`,
        },
        caPem: identity.caPem,
        certificate: read.value,
        async setFaults(faults) {
          const res = await request(`${server.url}/__sandbox/faults`, {
            method: 'PUT',
            dispatcher: admin,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(faults),
          });
          await res.body.text();
          if (res.statusCode !== 200) throw new Error(`faults: HTTP ${res.statusCode}`);
        },
        async close() {
          await admin.close();
          await server.close();
          await rm(dir, { recursive: true, force: true });
        },
      };
    },
  });
}
