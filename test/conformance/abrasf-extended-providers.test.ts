import type { NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { type AbrasfProviderConfig, defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { COPLAN_CONFIG } from '../../src/engines/abrasf-v2/providers/coplan.ts';
import { ERECEITA_CONFIG } from '../../src/engines/abrasf-v2/providers/ereceita.ts';
import { SISTEMAS4R_CONFIG } from '../../src/engines/abrasf-v2/providers/sistemas4r.ts';
import { SYSISS_CONFIG } from '../../src/engines/abrasf-v2/providers/sysiss.ts';
import { SUDOESTE_CONFIG } from '../../src/engines/abrasf-v2/providers/sudoeste.ts';
import { ERECEITA_PROFILE, SUDOESTE_PROFILE } from '../../src/sandbox/abrasf-v2/baseline-providers.ts';
import { COPLAN_PROFILE, createCoplanAbrasfService } from '../../src/sandbox/abrasf-v2/coplan.ts';
import type { AbrasfSandboxProfile } from '../../src/sandbox/abrasf-v2/index.ts';
import type { AbrasfSandboxOptions } from '../../src/sandbox/abrasf-v2/service.ts';
import { createSistemas4rService, SISTEMAS4R_PROFILE } from '../../src/sandbox/abrasf-v2/sistemas4r.ts';
import { createSysissService, SYSISS_PROFILE } from '../../src/sandbox/abrasf-v2/sysiss.ts';
import type { SandboxService } from '../../src/sandbox/kit/server.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { startWrappedAbrasfSandbox } from './abrasf-wrapped-env.ts';
import { describeConformance } from './suite.ts';

/**
 * ABRASF 2.0x providers on the base's data-driven extensions (per-environment namespaces and SOAPActions, renamed
 * string parameters, provider error entries, a provider's own SOAP idiom as a hook): one table row each, the
 * provider's engine against its sandbox profile in one of its cities (registry), a Simples Nacional prestador,
 * synchronous (GerarNfse); `async` rows also run the asynchronous lote. The business rejection: an RPS whose
 * prestador is not the certificate's holder (E171; the lote's signer: E157).
 */
interface Row {
  config: AbrasfProviderConfig;
  profile: AbrasfSandboxProfile;
  city: string;
  async?: boolean;
  service?: (profile: AbrasfSandboxProfile, options: AbrasfSandboxOptions) => SandboxService;
  /** the synchronous emission's rejection code when it is a signed lote (E157) rather than a signed RPS (E171) */
  rejection?: string;
}

const ROWS: Row[] = [
  { config: COPLAN_CONFIG, profile: COPLAN_PROFILE, city: '5100607', async: true, service: createCoplanAbrasfService },
  { config: ERECEITA_CONFIG, profile: ERECEITA_PROFILE, city: '3100500', async: true },
  { config: SUDOESTE_CONFIG, profile: SUDOESTE_PROFILE, city: '2906600', async: true },
  {
    config: SYSISS_CONFIG,
    profile: SYSISS_PROFILE,
    city: '4103404',
    async: true,
    service: createSysissService,
    rejection: 'E157',
  },
  {
    config: SISTEMAS4R_CONFIG,
    profile: SISTEMAS4R_PROFILE,
    city: '3520202',
    service: createSistemas4rService,
    rejection: 'E157',
  },
];

for (const row of ROWS) {
  const project: ProjectFiscalProfile = fiscalProfile({
    ambiente: 2,
    codigoMunicipio: row.city,
    regimeTributario: '3',
    aliquotaSimples: 6,
    inscricaoMunicipal: '1234567',
  });
  const invoiceOf = (p: ProjectFiscalProfile): NormalizedInvoice => normalized(p, {});
  const stranger = { ...project, cnpj: '45723174000110' };
  const { service, profile } = row;
  const target = {
    project,
    invoice: () => invoiceOf(project),
    rejection: { project: stranger, invoice: invoiceOf(stranger), code: row.rejection ?? 'E171' },
    start: () =>
      service ? startWrappedAbrasfSandbox(profile, project, service) : startAbrasfSandbox(profile, project, 0),
  };
  describeConformance({ ...target, family: defineAbrasfProvider(row.config) });
  if (row.async) {
    describeConformance({
      ...target,
      rejection: { ...target.rejection, code: 'E157' },
      family: defineAbrasfProvider({ ...row.config, emission: 'emitAsyncBatch' }),
    });
  }
}
