import { ABRASF_V1_DEFINITIONS } from '../../src/engines/abrasf-v1/index.ts';
import { createCigaService, CIGA_PROFILE } from '../../src/sandbox/abrasf-v1/ciga.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalizedInvoice, startProviderSandbox } from './support.ts';
import { describeConformance } from './suite.ts';

/**
 * CIGA (BH's ABRASF 1.00 schema; `<{Op}Request>{nfseCabecMsg, nfseDadosMsg}` in `http://nfse.abrasf.org.br`, SOAPAction
 * per operation; nothing signed; mutual TLS) against its sandbox, in São Cristóvão do Sul/SC (4216057), a Simples
 * Nacional provider. The sandbox holds a lote for `holdMs` = 0 and checks each of its answers against the provider's
 * schema. The business rejection: a lote whose prestador is not the certificate's holder (E157).
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4216057',
  regimeTributario: '3',
  aliquotaSimples: 5,
  inscricaoMunicipal: '123456',
});
const stranger = { ...project, cnpj: '45723174000110' };

describeConformance({
  family: ABRASF_V1_DEFINITIONS['abrasf-v1:ciga']!,
  project,
  invoice: () => normalizedInvoice(project),
  rejection: { project: stranger, invoice: normalizedInvoice(stranger), code: 'E157' },
  start: () =>
    startProviderSandbox({
      slug: CIGA_PROFILE.slug,
      project,
      service: ({ signer, dataDir }) =>
        createCigaService({
          signer,
          now: () => new Date(),
          logger: { info: () => {}, warn: () => {} },
          dataDir,
          holdMs: 0,
        }),
    }),
});
