import { createAbrasfV1Service } from '../../src/sandbox/abrasf-v1/service.ts';
import { WEBISS_V1_PROFILE } from '../../src/sandbox/abrasf-v1/webiss.ts';
import { describeAbrasfV1Conformance } from './abrasf-v1-env.ts';

/**
 * WebISS on its legacy ABRASF 1.00 service (WCF `NfseServices.svc`: `<Op><cabec/><msg/></Op>` in `http://tempuri.org/`,
 * escaped strings, the lote signed on LoteRps, mutual TLS) against its sandbox, in Estância/SE (2802106), a Simples
 * Nacional provider. The sandbox holds a lote for `holdMs` = 0 and checks each of its answers against WebISS's
 * schemas. The business rejection: a lote whose prestador is not the certificate's holder (E157).
 */
describeAbrasfV1Conformance({
  engine: 'abrasf-v1:webiss',
  project: { codigoMunicipio: '2802106' },
  slug: WEBISS_V1_PROFILE.slug,
  service: (options) => createAbrasfV1Service(WEBISS_V1_PROFILE, options),
});
