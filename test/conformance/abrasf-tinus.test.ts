import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { TINUS_ASYNC_CONFIG, TINUS_CONFIG } from '../../src/engines/abrasf-v2/providers/tinus.ts';
import { TINUS_PROFILE } from '../../src/sandbox/abrasf-v2/tinus.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Tinus (ABRASF 2.03 on InterSystems CSP: the message is the SOAP body, SOAPAction `…nfseSOAP.<root>`, signed RPS,
 * lote and cancellation, regApTribSN and the ADN cancellation fields, a national-layout NFS-e in the answers) against
 * the generic ABRASF sandbox in Jaboatão dos Guararapes/PE (2607901): once through GerarNfse, once through the
 * asynchronous lote. The business rejection: an RPS whose prestador is not the certificate's holder (E171; the
 * lote of such an RPS is refused as a whole, E157).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2607901',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '778899',
});
const stranger = { ...project, cnpj: '45723174000110' };
const target = {
  project,
  invoice: () => normalized(project),
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E171' },
};

describeConformance({
  ...target,
  family: defineAbrasfProvider(TINUS_CONFIG),
  start: () => startAbrasfSandbox(TINUS_PROFILE, project),
});

describeConformance({
  ...target,
  rejection: { ...target.rejection, code: 'E157' },
  family: defineAbrasfProvider(TINUS_ASYNC_CONFIG),
  start: () => startAbrasfSandbox(TINUS_PROFILE, project, 0),
});
