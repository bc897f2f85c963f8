import { defineAbrasfProvider, webissFamily } from '../../src/engines/abrasf-v2/index.ts';
import { WEBISS_ASYNC_CONFIG } from '../../src/engines/abrasf-v2/providers/webiss.ts';
import { WEBISS_PROFILE } from '../../src/sandbox/abrasf-v2/index.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * WebISS (ABRASF 2.02, the official `<Op>Request{nfseCabecMsg, nfseDadosMsg}` with escaped strings, mutual TLS)
 * against the generic ABRASF sandbox in Aracaju/SE (2800308), a Simples Nacional provider: once synchronous (GerarNfse), once
 * through the asynchronous lote (RecepcionarLoteRps → Protocolo → ConsultarLoteRps Situacao 2 … 4).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2800308',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };
const target = {
  project,
  invoice: () => normalized(project),
  rejection: { project: stranger, invoice: normalized(stranger), code: 'E171' },
};

describeConformance({ ...target, family: webissFamily, start: () => startAbrasfSandbox(WEBISS_PROFILE, project) });

// the lote is processed at the first query after it arrived (holdMs 0; the wait itself, Situacao 2 with E178, is
// covered by test/sandbox/abrasf-v2.test.ts); the lote of a stranger's RPS is refused at receipt: its signer is not
// the lote's CNPJ (E157)
describeConformance({
  ...target,
  rejection: { ...target.rejection, code: 'E157' },
  family: defineAbrasfProvider(WEBISS_ASYNC_CONFIG),
  start: () => startAbrasfSandbox(WEBISS_PROFILE, project, 0),
});
