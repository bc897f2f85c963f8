import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { PRODATA_CONFIG } from '../../src/engines/abrasf-v2/providers/prodata.ts';
import { PRODATA_PROFILE } from '../../src/sandbox/abrasf-v2/baseline.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { startAbrasfSandbox, strangerRejectionTarget } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Prodata (ABRASF 2.01 in `http://services.nfse`, mutual TLS, RPS/lote/cancellation signed) against the generic
 * baseline sandbox profile in Luziânia/GO (5212501, a Prodata city), a Simples Nacional provider: through the
 * asynchronous lote (its ModoEnvio), then synchronously (GerarNfse). The business rejection: a lote signed by someone
 * else than its prestador (E157; the RPS's signer: E171).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '5212501',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const target = strangerRejectionTarget(project, 'E157', () => startAbrasfSandbox(PRODATA_PROFILE, project, 0));

describeConformance({ ...target, family: defineAbrasfProvider(PRODATA_CONFIG) });
describeConformance({
  ...target,
  rejection: { ...target.rejection, code: 'E171' },
  family: defineAbrasfProvider({ ...PRODATA_CONFIG, emission: 'emitSingle' }),
});
