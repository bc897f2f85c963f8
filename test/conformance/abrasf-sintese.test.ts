import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { SINTESE_CONFIG } from '../../src/engines/abrasf-v2/providers/sintese.ts';
import { SINTESE_PROFILE } from '../../src/sandbox/abrasf-v2/baseline.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { startAbrasfSandbox, strangerRejectionTarget } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Sintese (ABRASF 2.04, the operation element named after the message root, mutual TLS, RPS/lote/cancellation signed)
 * against the generic baseline sandbox profile in MG (3135100, a Sintese city), a Simples Nacional provider: synchronous
 * (GerarNfse), then through the asynchronous lote. The business rejection: an RPS whose prestador is not the
 * certificate's holder (E171; the lote's signer: E157).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3135100',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const target = strangerRejectionTarget(project, 'E171', () => startAbrasfSandbox(SINTESE_PROFILE, project, 0));

describeConformance({ ...target, family: defineAbrasfProvider(SINTESE_CONFIG) });
describeConformance({
  ...target,
  rejection: { ...target.rejection, code: 'E157' },
  family: defineAbrasfProvider({ ...SINTESE_CONFIG, emission: 'emitAsyncBatch' }),
});
