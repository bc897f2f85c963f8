import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { TRIBUTUS_CONFIG } from '../../src/engines/abrasf-v2/providers/tributus.ts';
import { TRIBUTUS_PROFILE } from '../../src/sandbox/abrasf-v2/tributus.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Tributus (ABRASF 2.04 in `https://tributosmunicipais.com.br/nfse/api/`, CDATA strings, the signed elements' `id`,
 * the authorization key as `?tokenAuth=`) against its sandbox profile in a Tributus city of Maranhão (IBGE 2107407), a
 * Simples Nacional provider: synchronous (GerarNfse), then through the asynchronous lote. The
 * business rejection: a taxpayer the provider knows with another authorization key (E179).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2107407',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '778899',
});
const stranger = { ...project, cnpj: '45723174000110' };
const profile = {
  ...TRIBUTUS_PROFILE,
  knownCredentials: { [stranger.cnpj]: { username: stranger.cnpj, password: 'outra-chave' } },
};
const target = {
  project,
  invoice: () => normalized(project),
  credentials: { authorizationKey: 'chave-autorizacao-teste' },
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E179' },
  start: () => startAbrasfSandbox(profile, project, 0),
};

describeConformance({ ...target, family: defineAbrasfProvider(TRIBUTUS_CONFIG) });
describeConformance({ ...target, family: defineAbrasfProvider({ ...TRIBUTUS_CONFIG, emission: 'emitAsyncBatch' }) });
