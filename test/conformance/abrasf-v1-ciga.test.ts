import { createCigaService, CIGA_PROFILE } from '../../src/sandbox/abrasf-v1/ciga.ts';
import { describeAbrasfV1Conformance } from './abrasf-v1-env.ts';

/**
 * CIGA (BH's ABRASF 1.00 schema; `<{Op}Request>{nfseCabecMsg, nfseDadosMsg}` in `http://nfse.abrasf.org.br`, SOAPAction
 * per operation; nothing signed; mutual TLS) against its sandbox, in São Cristóvão do Sul/SC (4216057), a Simples
 * Nacional provider. The sandbox holds a lote for `holdMs` = 0 and checks each of its answers against the provider's
 * schema. The business rejection: a lote whose prestador is not the certificate's holder (E157).
 */
describeAbrasfV1Conformance({
  engine: 'abrasf-v1:ciga',
  project: { codigoMunicipio: '4216057' },
  slug: CIGA_PROFILE.slug,
  service: createCigaService,
});
