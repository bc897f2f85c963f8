import { ABRASF_V1_DEFINITIONS } from '../../src/engines/abrasf-v1/index.ts';
import { createIssFortalezaService } from '../../src/sandbox/abrasf-v1/issfortaleza.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalizedInvoice, startProviderSandbox } from './support.ts';
import { describeConformance } from './suite.ts';

/**
 * ISSFortaleza (a GINFES v3 clone: `Cabecalho` + message parts in `…issfortaleza.com.br`, asynchronous lotes, lote and
 * consultations signed, mutual TLS) against its sandbox, in Fortaleza/CE (2304400), a Simples Nacional provider with
 * its CNAE. The sandbox holds a lote for `holdMs` = 0: the emission answers `pending` with a Protocolo, the first
 * ConsultarSituacaoLoteRpsV3 processes it and ConsultarLoteRpsV3 returns the NFS-e. No cancellation (the legacy v2
 * CancelarNfse has no public schema). The business rejection: a lote whose prestador is not the certificate's holder
 * (E157, refused at reception).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2304400',
  regimeTributario: '3',
  aliquotaSimples: 5,
  inscricaoMunicipal: '123456',
  cnae: '6201501',
});
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  family: ABRASF_V1_DEFINITIONS['abrasf-v1:issfortaleza']!,
  project,
  invoice: () => normalizedInvoice(project),
  rejection: { project: stranger, invoice: normalizedInvoice(stranger), code: 'E157' },
  start: () =>
    startProviderSandbox({
      slug: 'issfortaleza',
      project,
      service: ({ signer, dataDir }) =>
        createIssFortalezaService({
          signer,
          now: () => new Date(),
          logger: { info: () => {}, warn: () => {} },
          dataDir,
          holdMs: 0,
        }),
    }),
});
