import { createAbrasfV1Service } from '../../src/sandbox/abrasf-v1/service.ts';
import { SPEEDGOV_PROFILE } from '../../src/sandbox/abrasf-v1/speedgov.ts';
import { describeAbrasfV1Conformance } from './abrasf-v1-env.ts';

/**
 * SpeedGov 1.00 (per-message namespaces, `header` + `parameters`, asynchronous lotes, nothing signed, no client
 * certificate) against its sandbox, in Aquiraz/CE (2301000, a SpeedGov city), a Simples Nacional provider. The
 * sandbox holds a lote for `holdMs` = 0 and knows one prestador (the project's CNPJ and inscrição): the business
 * rejection is a lote of another CNPJ (E43, inscrição not found in the municipality's register).
 */
describeAbrasfV1Conformance({
  engine: 'abrasf-v1:speedgov',
  project: { codigoMunicipio: '2301000' },
  slug: SPEEDGOV_PROFILE.slug,
  service: (options, project) =>
    createAbrasfV1Service(SPEEDGOV_PROFILE, {
      ...options,
      registered: (cnpj, im) => cnpj === project.cnpj && im === project.inscricaoMunicipal,
    }),
  rejectionCode: 'E43',
});
