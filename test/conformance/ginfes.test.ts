import { normalizedInvoice, startProviderSandbox } from './support.ts';
import { ginfesFamily } from '../../src/engines/ginfes/family.ts';
import { createGinfesService } from '../../src/sandbox/ginfes/service.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { describeConformance } from './suite.ts';

/**
 * GINFES against its sandbox, in Guarulhos/SP (3518800), a Simples Nacional provider with the CNAE GINFES requires. The sandbox holds a lote
 * for `holdMs` = 0 here: the emission answers `pending` with a Protocolo, the first ConsultarSituacaoLoteRps
 * processes it (Situacao 4) and ConsultarLoteRps returns the NFS-e. The business rejection: a lote whose prestador
 * is not the certificate's holder (E157, refused at reception).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3518800',
  regimeTributario: '3',
  aliquotaSimples: 6,
  inscricaoMunicipal: '123456',
  cnae: '6201501',
});
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  family: ginfesFamily,
  project,
  invoice: () => normalizedInvoice(project),
  rejection: { project: stranger, invoice: normalizedInvoice(stranger), code: 'E157' },
  start: () =>
    startProviderSandbox({
      slug: 'ginfes',
      project,
      service: ({ signer, dataDir }) =>
        createGinfesService({
          signer,
          now: () => new Date(),
          logger: { info: () => {}, warn: () => {} },
          dataDir,
          holdMs: 0,
        }),
    }),
});
