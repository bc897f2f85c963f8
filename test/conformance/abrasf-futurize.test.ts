import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { FUTURIZE_CONFIG } from '../../src/engines/abrasf-v2/providers/futurize.ts';
import { FUTURIZE_PROFILE } from '../../src/sandbox/abrasf-v2/futurize.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * Futurize (ABRASF 2.02 with CTribNac/cNBS instead of ItemListaServico; escaped strings in `<Op>Request`; no client
 * certificate; RPS and cancellation signed) against the generic ABRASF sandbox in Cachoeira do Arari/PA (1502004, a
 * Futurize city), a Simples Nacional provider. The business rejection: an RPS whose prestador is not the
 * certificate's holder (E171).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '1502004',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };
// cNBS is required: a final NBS of subitem 01.01 (115021000, in the official NBS framings of the national tables)
const servico = { descricao: 'Desenvolvimento de software sob encomenda', codigo: '010101', nbs: '115021000' };

describeConformance({
  family: defineAbrasfProvider(FUTURIZE_CONFIG),
  project,
  invoice: () => normalized(project, { servico }),
  rejection: { project: stranger, invoice: normalized(stranger, { servico }), code: 'E171' },
  start: () => startAbrasfSandbox(FUTURIZE_PROFILE, project),
});

// the synchronous lote as Futurize takes it: RecepcionarLoteRpsSincrono carrying EnviarLoteRpsEnvio (unsigned lote),
// answered as EnviarLoteRpsResposta with the NFS-e
describeConformance({
  family: defineAbrasfProvider({ ...FUTURIZE_CONFIG, emission: 'emitSyncBatch' }),
  project,
  invoice: () => normalized(project, { servico }),
  rejection: { project: stranger, invoice: normalized(stranger, { servico }), code: 'E171' },
  start: () => startAbrasfSandbox(FUTURIZE_PROFILE, project),
});
