import { ABRASF_V1_DEFINITIONS } from '../../src/engines/abrasf-v1/index.ts';
import { createAbrasfV1Service } from '../../src/sandbox/abrasf-v1/service.ts';
import { SPEEDGOV_PROFILE } from '../../src/sandbox/abrasf-v1/speedgov.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalizedInvoice, startProviderSandbox } from './support.ts';
import { describeConformance } from './suite.ts';

/**
 * SpeedGov 1.00 (per-message namespaces, `header` + `parameters`, asynchronous lotes, nothing signed, no client
 * certificate) against its sandbox, in Aquiraz/CE (2301000, a SpeedGov city), a Simples Nacional provider. The
 * sandbox holds a lote for `holdMs` = 0 and knows one prestador (the project's CNPJ and inscrição): the business
 * rejection is a lote of another CNPJ (E43, inscrição not found in the municipality's register).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2301000',
  regimeTributario: '3',
  aliquotaSimples: 5,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  family: ABRASF_V1_DEFINITIONS['abrasf-v1:speedgov']!,
  project,
  invoice: () => normalizedInvoice(project),
  rejection: { project: stranger, invoice: normalizedInvoice(stranger), code: 'E43' },
  start: () =>
    startProviderSandbox({
      slug: SPEEDGOV_PROFILE.slug,
      project,
      service: ({ signer, dataDir }) =>
        createAbrasfV1Service(SPEEDGOV_PROFILE, {
          signer,
          now: () => new Date(),
          logger: { info: () => {}, warn: () => {} },
          dataDir,
          holdMs: 0,
          registered: (cnpj, im) => cnpj === project.cnpj && im === project.inscricaoMunicipal,
        }),
    }),
});
