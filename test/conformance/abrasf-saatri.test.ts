import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { SAATRI_CONFIG } from '../../src/engines/abrasf-v2/providers/saatri.ts';
import { SAATRI_PROFILE } from '../../src/sandbox/abrasf-v2/saatri.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Saatri (ABRASF 2.03, SOAPAction `…/Infse/<Op>`, the web-service user and password in a WS-Security
 * UsernameToken, RPS/lote/cancellation signed, no client certificate) against its sandbox profile in Alcobaça/BA
 * (2900801, a Saatri city), a Simples Nacional provider: synchronous (GerarNfse), then through the asynchronous
 * lote. The business rejection: a taxpayer the provider knows with another password (E179).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2900801',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '3344',
});
const stranger = { ...project, cnpj: '45723174000110' };
const profile = {
  ...SAATRI_PROFILE,
  knownCredentials: { [stranger.cnpj]: { username: stranger.cnpj, password: 'outra-senha' } },
};
const target = {
  project,
  invoice: () => normalized(project),
  credentials: { municipalUser: project.cnpj, municipalPassword: 'senha-ws' },
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E179' },
  start: () => startAbrasfSandbox(profile, project, 0),
};

describeConformance({ ...target, family: defineAbrasfProvider(SAATRI_CONFIG) });
describeConformance({ ...target, family: defineAbrasfProvider({ ...SAATRI_CONFIG, emission: 'emitAsyncBatch' }) });
