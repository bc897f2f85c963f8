import { normalizedInvoice } from './support.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { Agent } from 'undici';
import { createA1Certificate, createCertificateAuthority } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { nationalFamily } from '../../src/engines/national/family.ts';
import { provisionSandboxIdentity } from '../../src/sandbox/identity.ts';
import { startSefinSandbox } from '../../src/sandbox/sefin/server.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { type ConformanceEnvironment, describeConformance } from './suite.ts';

/**
 * The national family against the Sefin Nacional sandbox (homologation: /producaorestrita/SefinNacional): a
 * regime-1 provider in Recife (adherent, not parametrised in the sandbox ADN) with IBS/CBS defaults, as onboarded.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2611606',
  ...IBS_CBS_FRAMING,
});

describeConformance({
  family: nationalFamily,
  project,
  invoice: () => normalizedInvoice(project),
  // a production DPS (tpAmb 1) sent to the homologation environment: E0006
  rejection: {
    project: { ...project, ambiente: 1 },
    invoice: normalizedInvoice({ ...project, ambiente: 1 }),
    code: 'E0006',
  },
  async start(): Promise<ConformanceEnvironment> {
    const dir = await mkdtemp(join(tmpdir(), 'conformance-national-'));
    const identity = provisionSandboxIdentity(join(dir, 'identity'));
    const ca = createCertificateAuthority('AC Teste ICP-Brasil');
    const files = createA1Certificate({ cnpj: project.cnpj, name: project.razaoSocial, password: 'x', issuer: ca });
    const read = readPkcs12(files.pfx, files.password);
    if (!read.ok) throw new Error(read.error.message);
    const sandbox = await startSefinSandbox({
      tls: identity.tls,
      signer: identity.signer,
      storeFile: join(dir, 'store.jsonl'),
    });
    const admin = new Agent({ connect: { key: read.value.keyPem, cert: read.value.certPem, ca: identity.caPem } });
    return {
      endpoints: {
        url: (_operation, ambiente) =>
          `${sandbox.url}/${ambiente === 1 ? 'producao' : 'producaorestrita'}/SefinNacional`,
      },
      caPem: identity.caPem,
      certificate: read.value,
      // through the sandbox's admin route, as an operator would
      async setFaults(faults) {
        const res = await request(`${sandbox.url}/__sandbox/faults`, {
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
        await sandbox.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  },
});
