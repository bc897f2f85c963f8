import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { SH3_CONFIG } from '../../src/engines/abrasf-v2/providers/sh3.ts';
import { SH3_PROFILE } from '../../src/sandbox/abrasf-v2/baseline.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { startAbrasfSandbox, strangerRejectionTarget } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * SH3 (nfiss: the official ABRASF 2.02 contract, mutual TLS, RPS and cancellation signed) against the generic baseline
 * sandbox profile in Conceição de Macabu/RJ (3301405, an SH3 city), a Simples Nacional provider: synchronous
 * (GerarNfse), then through the asynchronous lote. The business rejection: an RPS whose prestador is not the
 * certificate's holder (E171; the lote's signer: E157).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3301405',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const target = strangerRejectionTarget(project, 'E171', () => startAbrasfSandbox(SH3_PROFILE, project, 0));

describeConformance({ ...target, family: defineAbrasfProvider(SH3_CONFIG) });
describeConformance({
  ...target,
  rejection: { ...target.rejection, code: 'E157' },
  family: defineAbrasfProvider({ ...SH3_CONFIG, emission: 'emitAsyncBatch' }),
});
