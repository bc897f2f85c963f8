import { ABRASF_V1_DEFINITIONS } from '../../src/engines/abrasf-v1/index.ts';
import { METROPOLISWEB_PROFILE } from '../../src/sandbox/abrasf-v1/metropolisweb.ts';
import { createAbrasfV1Service } from '../../src/sandbox/abrasf-v1/service.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalizedInvoice, startProviderSandbox } from './support.ts';
import { describeConformance } from './suite.ts';

/**
 * MetropolisWeb (official ABRASF 1.00 messages in `<Op><OpRequest>{nfseCabecMsg, nfseDadosMsg}`, RPS, lote and
 * cancellation signed, no client certificate) against its sandbox, in Ilhéus/BA (2913606), a Simples Nacional
 * provider. The sandbox holds a lote for `holdMs` = 0 and checks each of its answers against the provider's schema.
 * The business rejection: a lote whose prestador is not the signer (E157, refused at reception).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2913606',
  regimeTributario: '3',
  aliquotaSimples: 5,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  family: ABRASF_V1_DEFINITIONS['abrasf-v1:metropolisweb']!,
  project,
  invoice: () => normalizedInvoice(project),
  rejection: { project: stranger, invoice: normalizedInvoice(stranger), code: 'E157' },
  start: () =>
    startProviderSandbox({
      slug: METROPOLISWEB_PROFILE.slug,
      project,
      service: ({ signer, dataDir }) =>
        createAbrasfV1Service(METROPOLISWEB_PROFILE, {
          signer,
          now: () => new Date(),
          logger: { info: () => {}, warn: () => {} },
          dataDir,
          holdMs: 0,
        }),
    }),
});
