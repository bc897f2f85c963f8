import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { MEGASOFT_CONFIG } from '../../src/engines/abrasf-v2/providers/megasoft.ts';
import { MEGASOFT_PROFILE } from '../../src/sandbox/abrasf-v2/megasoft.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * MegaSoft ArrecadaNet (its own namespace and cut-down ABRASF 2.00 XSD; GerarNfse in CDATA and ConsultarNfsePorRps
 * escaped inside `<Op>Request{nfseCabecMsg, nfseDadosMsg}`; mutual TLS; no cancellation through the web service)
 * against the generic ABRASF sandbox in Tartarugalzinho/AP (1600709, a MegaSoft city), a Simples Nacional
 * provider. The business rejection: an RPS whose prestador is not the certificate's holder (E171).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '1600709',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  family: defineAbrasfProvider(MEGASOFT_CONFIG),
  project,
  invoice: () => normalized(project),
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E171' },
  start: () => startAbrasfSandbox(MEGASOFT_PROFILE, project),
});
