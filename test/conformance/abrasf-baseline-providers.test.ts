import type { NormalizedInvoice } from '../../src/domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';
import { type AbrasfProviderConfig, defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { DESENVOLVE_CONFIG } from '../../src/engines/abrasf-v2/providers/desenvolve.ts';
import { ISSCAMPINAS_CONFIG, ISSDSF_CONFIG } from '../../src/engines/abrasf-v2/providers/dsf-platform.ts';
import { GESTAOISS_CONFIG } from '../../src/engines/abrasf-v2/providers/gestaoiss.ts';
import { ISSCAMACARI_CONFIG } from '../../src/engines/abrasf-v2/providers/isscamacari.ts';
import { ISSLEGAL_CONFIG } from '../../src/engines/abrasf-v2/providers/isslegal.ts';
import { NEAINFORMATICA_CONFIG } from '../../src/engines/abrasf-v2/providers/neainformatica.ts';
import { TIPLAN_CONFIG } from '../../src/engines/abrasf-v2/providers/tiplan.ts';
import type { ProjectCredentials } from '../../src/engines/kit/auth.ts';
import {
  DESENVOLVE_PROFILE,
  GESTAOISS_PROFILE,
  ISSCAMACARI_PROFILE,
  ISSCAMPINAS_PROFILE,
  ISSDSF_PROFILE,
  TIPLAN_PROFILE,
} from '../../src/sandbox/abrasf-v2/baseline-providers.ts';
import type { AbrasfSandboxProfile } from '../../src/sandbox/abrasf-v2/index.ts';
import { createIssLegalService, ISSLEGAL_PROFILE } from '../../src/sandbox/abrasf-v2/isslegal.ts';
import { createNeaInformaticaService, NEAINFORMATICA_PROFILE } from '../../src/sandbox/abrasf-v2/neainformatica.ts';
import type { AbrasfSandboxOptions } from '../../src/sandbox/abrasf-v2/service.ts';
import type { SandboxService } from '../../src/sandbox/kit/server.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { startWrappedAbrasfSandbox } from './abrasf-wrapped-env.ts';
import { describeConformance } from './suite.ts';

/**
 * The ABRASF 2.0x providers whose contract is one another profile already describes (the official baseline, or
 * DSF's 2.03 platform), one table row each: the provider's engine against its sandbox profile in one of its cities,
 * a Simples Nacional prestador, synchronous (GerarNfse); `async` rows also run the asynchronous lote. The business
 * rejection: an RPS whose prestador is not the certificate's holder (E171; the lote's signer: E157); for a provider
 * whose messages are unsigned and that takes an HTTP credential (ISSLegal's Authorization key), a taxpayer the
 * provider knows with another key (E179).
 */
interface Row {
  config: AbrasfProviderConfig;
  profile: AbrasfSandboxProfile;
  /** an IBGE code of one of the provider's cities (registry) */
  city: string;
  /** the provider requires a CNAE (DSF's platform: 9 digits; Desenvolve: 7) */
  cnae?: boolean;
  async?: boolean;
  /** the provider's own layer over the generic service (its SOAP idiom or HTTP credential) */
  service?: (profile: AbrasfSandboxProfile, options: AbrasfSandboxOptions) => SandboxService;
  /** the HTTP credential the engine sends (unsigned messages: the rejection is a known taxpayer's other key, E179) */
  credentials?: ProjectCredentials;
}

const ROWS: Row[] = [
  { config: DESENVOLVE_CONFIG, profile: DESENVOLVE_PROFILE, city: '1500107', cnae: true, async: true },
  { config: GESTAOISS_CONFIG, profile: GESTAOISS_PROFILE, city: '4108304' },
  { config: ISSCAMACARI_CONFIG, profile: ISSCAMACARI_PROFILE, city: '2905701' },
  { config: ISSCAMPINAS_CONFIG, profile: ISSCAMPINAS_PROFILE, city: '3509502', cnae: true },
  { config: ISSDSF_CONFIG, profile: ISSDSF_PROFILE, city: '5002704', cnae: true },
  { config: TIPLAN_CONFIG, profile: TIPLAN_PROFILE, city: '3300100' },
  {
    config: ISSLEGAL_CONFIG,
    profile: ISSLEGAL_PROFILE,
    city: '3170529',
    service: createIssLegalService,
    credentials: { authorizationKey: 'chave-rede-municipal' },
  },
  {
    config: NEAINFORMATICA_CONFIG,
    profile: NEAINFORMATICA_PROFILE,
    city: '5002100',
    service: createNeaInformaticaService,
  },
];

for (const row of ROWS) {
  const project: ProjectFiscalProfile = fiscalProfile({
    ambiente: 2,
    codigoMunicipio: row.city,
    regimeTributario: '3',
    aliquotaSimples: 6,
    inscricaoMunicipal: '1234567',
    ...(row.cnae ? { cnae: '6201501' } : {}),
  });
  const overrides = row.cnae
    ? { servico: { descricao: 'Desenvolvimento de software', codigo: '010101', cnae: '620150100' } }
    : {};
  const invoiceOf = (p: ProjectFiscalProfile): NormalizedInvoice => normalized(p, overrides);
  const stranger = { ...project, cnpj: '45723174000110' };
  const { service, credentials } = row;
  const known = credentials ? { [stranger.cnpj]: { username: stranger.cnpj, password: 'outra-chave' } } : undefined;
  const profile = known ? { ...row.profile, knownCredentials: known } : row.profile;
  const target = {
    project,
    invoice: () => invoiceOf(project),
    ...(credentials ? { credentials } : {}),
    rejection: { project: stranger, invoice: invoiceOf(stranger), code: credentials ? 'E179' : 'E171' },
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
