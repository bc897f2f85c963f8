import { METROPOLISWEB_PROFILE } from '../../src/sandbox/abrasf-v1/metropolisweb.ts';
import { createAbrasfV1Service } from '../../src/sandbox/abrasf-v1/service.ts';
import { describeAbrasfV1Conformance } from './abrasf-v1-env.ts';

/**
 * MetropolisWeb (official ABRASF 1.00 messages in `<Op><OpRequest>{nfseCabecMsg, nfseDadosMsg}`, RPS, lote and
 * cancellation signed, no client certificate) against its sandbox, in Ilhéus/BA (2913606), a Simples Nacional
 * provider. The sandbox holds a lote for `holdMs` = 0 and checks each of its answers against the provider's schema.
 * The business rejection: a lote whose prestador is not the signer (E157, refused at reception).
 */
describeAbrasfV1Conformance({
  engine: 'abrasf-v1:metropolisweb',
  project: { codigoMunicipio: '2913606' },
  slug: METROPOLISWEB_PROFILE.slug,
  service: (options) => createAbrasfV1Service(METROPOLISWEB_PROFILE, options),
});
