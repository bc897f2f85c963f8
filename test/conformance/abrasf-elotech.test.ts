import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { ELOTECH_ASYNC_CONFIG, ELOTECH_CONFIG } from '../../src/engines/abrasf-v2/providers/elotech.ts';
import { ELOTECH_PROFILE } from '../../src/sandbox/abrasf-v2/profiles.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * EloTech (ABRASF 2.03 on Spring-WS: the message is the SOAP body, no signature, IdentificacaoRequerente with the
 * taxpayer's password and `Homologa`) against the generic ABRASF sandbox in Irati/PR (4110706), once through the
 * synchronous lote (EnviarLoteRpsSincrono, ACBr's default) and once through the asynchronous lote polled by
 * NumeroLote. The business rejection: a taxpayer the provider knows with another password (E179).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4110706',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '4455',
  cnae: '6201501',
});
const stranger = { ...project, cnpj: '45723174000110' };
const profile = {
  ...ELOTECH_PROFILE,
  knownCredentials: { [stranger.cnpj]: { username: stranger.cnpj, password: 'outra-senha' } },
};
const target = {
  project,
  invoice: () => normalized(project),
  credentials: { municipalUser: '4455', municipalPassword: 'senha-portal' },
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E179' },
};

describeConformance({
  ...target,
  family: defineAbrasfProvider(ELOTECH_CONFIG),
  start: () => startAbrasfSandbox(profile, project),
});

describeConformance({
  ...target,
  family: defineAbrasfProvider(ELOTECH_ASYNC_CONFIG),
  start: () => startAbrasfSandbox(profile, project, 0),
});
