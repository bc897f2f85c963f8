import { ABRASF_V1_DEFINITIONS } from '../../src/engines/abrasf-v1/index.ts';
import { createAbrasfV1Service } from '../../src/sandbox/abrasf-v1/service.ts';
import { WEBISS_V1_PROFILE } from '../../src/sandbox/abrasf-v1/webiss.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalizedInvoice, startProviderSandbox } from './support.ts';
import { describeConformance } from './suite.ts';

/**
 * WebISS on its legacy ABRASF 1.00 service (WCF `NfseServices.svc`: `<Op><cabec/><msg/></Op>` in `http://tempuri.org/`,
 * escaped strings, the lote signed on LoteRps, mutual TLS) against its sandbox, in Estância/SE (2802106), a Simples
 * Nacional provider. The sandbox holds a lote for `holdMs` = 0 and checks each of its answers against WebISS's
 * schemas. The business rejection: a lote whose prestador is not the certificate's holder (E157).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '2802106',
  regimeTributario: '3',
  aliquotaSimples: 5,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  family: ABRASF_V1_DEFINITIONS['abrasf-v1:webiss']!,
  project,
  invoice: () => normalizedInvoice(project),
  rejection: { project: stranger, invoice: normalizedInvoice(stranger), code: 'E157' },
  start: () =>
    startProviderSandbox({
      slug: WEBISS_V1_PROFILE.slug,
      project,
      service: ({ signer, dataDir }) =>
        createAbrasfV1Service(WEBISS_V1_PROFILE, {
          signer,
          now: () => new Date(),
          logger: { info: () => {}, warn: () => {} },
          dataDir,
          holdMs: 0,
        }),
    }),
});
