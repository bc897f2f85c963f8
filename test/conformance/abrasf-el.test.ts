import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { EL_ASYNC_CONFIG, EL_CONFIG } from '../../src/engines/abrasf-v2/providers/el.ts';
import { EL_PROFILE } from '../../src/sandbox/abrasf-v2/index.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * EL (ABRASF 2.04, `<Op><Op>Request{nfseCabecMsg, nfseDadosMsg}>` with CDATA strings, mutual TLS, LoteRps/Prestador)
 * against the generic ABRASF sandbox in Porto Velho/RO (1100205), a Simples Nacional provider: once synchronous
 * (GerarNfse), once through the asynchronous lote (RecepcionarLoteRps → Protocolo → ConsultarLoteRps).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '1100205',
  regimeTributario: '3',
  aliquotaSimples: 5,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };
const target = {
  project,
  invoice: () => normalized(project),
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E171' },
};

describeConformance({
  ...target,
  family: defineAbrasfProvider(EL_CONFIG),
  start: () => startAbrasfSandbox(EL_PROFILE, project),
});

// the lote of a stranger's RPS is refused at receipt: its signer is not the lote's Prestador (E157)
describeConformance({
  ...target,
  rejection: { ...target.rejection, code: 'E157' },
  family: defineAbrasfProvider(EL_ASYNC_CONFIG),
  start: () => startAbrasfSandbox(EL_PROFILE, project, 0),
});
