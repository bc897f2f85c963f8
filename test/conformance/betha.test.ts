import { normalizedInvoice, startProviderSandbox } from './support.ts';
import { bethaFamily } from '../../src/engines/dps-provider/betha.ts';
import { createBethaService } from '../../src/sandbox/betha/service.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { describeConformance } from './suite.ts';

/**
 * Betha against its sandbox, in Acrelândia/AC (1200013, a Betha city not adherent to the national emitter), a
 * Simples Nacional provider (regime 3). The sandbox holds each submission for `holdMs` = 0 here: the emission still
 * answers `pending` with a protocol (the engine never gets a note from RecepcionarDps), and the first status query
 * processes it; the wait itself ("Aguardando validação do ambiente nacional") is covered by test/sandbox/betha.test.ts.
 * The business rejection: a DPS whose provider is not the certificate's holder (E0718, refused synchronously).
 */
const project = fiscalProfile({ ambiente: 2, codigoMunicipio: '1200013', regimeTributario: '3', aliquotaSimples: 6 });
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  family: bethaFamily,
  project,
  invoice: () => normalizedInvoice(project),
  rejection: { project: stranger, invoice: normalizedInvoice(stranger), code: 'E0718' },
  start: () =>
    startProviderSandbox({
      slug: 'betha',
      project,
      service: ({ signer, dataDir }) =>
        createBethaService({
          signer,
          now: () => new Date(),
          logger: { info: () => {}, warn: () => {} },
          dataDir,
          holdMs: 0,
        }),
    }),
});
