import { fiorilliAbrasfFamily } from '../../src/engines/abrasf-v2/index.ts';
import { FIORILLI_PROFILE } from '../../src/sandbox/abrasf-v2/index.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Fiorilli (ABRASF 2.01, GerarNfse inline in `gerarNfse` with username/password) against the generic ABRASF sandbox
 * in Ariquemes/RO (1100023, a Fiorilli city), a Simples Nacional provider. The business rejection: an RPS whose
 * prestador is not the certificate's holder (E171).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '1100023',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '15000',
});
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  family: fiorilliAbrasfFamily,
  project,
  invoice: () => normalized(project),
  credentials: { basicAuthUsuario: project.cnpj, basicAuthSenha: 'senha-portal' },
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E171' },
  start: () => startAbrasfSandbox(FIORILLI_PROFILE, project),
});
