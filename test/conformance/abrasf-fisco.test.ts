import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { FISCO_CONFIG } from '../../src/engines/abrasf-v2/providers/fisco.ts';
import { FISCO_PROFILE } from '../../src/sandbox/abrasf-v2/fisco.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { startAbrasfSandbox, strangerRejectionTarget } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Fisco (ABRASF 2.03 on an ASMX SOAP 1.2 service: `<gerarNfse><xml>` CDATA, messages without the ABRASF namespace,
 * `<op>Result` answers, no XML signature, mutual TLS) against its sandbox profile in a Fisco city of Piauí
 * (IBGE 2200400), a Simples Nacional provider: synchronous (GerarNfse), then through the asynchronous lote. The
 * business rejection: an RPS whose prestador is not the TLS certificate's holder (E157).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2200400',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '5566',
});
const target = strangerRejectionTarget(project, 'E157', () => startAbrasfSandbox(FISCO_PROFILE, project, 0));

describeConformance({ ...target, family: defineAbrasfProvider(FISCO_CONFIG) });
describeConformance({ ...target, family: defineAbrasfProvider({ ...FISCO_CONFIG, emission: 'emitAsyncBatch' }) });
