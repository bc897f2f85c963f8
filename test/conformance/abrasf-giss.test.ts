import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { GISS_CONFIG } from '../../src/engines/abrasf-v2/providers/giss.ts';
import { GISS_PROFILE } from '../../src/sandbox/abrasf-v2/giss.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * GISS Online (ABRASF 2.04 with split namespaces, Aliquota as a fraction, signed queries, mutual TLS; only the
 * asynchronous lote issues) against the generic ABRASF sandbox in Maceió/AL (2704302), a Simples Nacional provider:
 * RecepcionarLoteRps → Protocolo → ConsultarLoteRps (signed) Situacao 4. The lote of a stranger's RPS is refused
 * at receipt: its signer is not the lote's Prestador (E157).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2704302',
  regimeTributario: '3',
  aliquotaSimples: 3.07,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  project,
  invoice: () => normalized(project),
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E157' },
  family: defineAbrasfProvider(GISS_CONFIG),
  start: () => startAbrasfSandbox(GISS_PROFILE, project, 0),
});
