import { defineAbrasfProvider } from '../../src/engines/abrasf-v2/index.ts';
import { GOVDIGITAL_CONFIG } from '../../src/engines/abrasf-v2/providers/govdigital.ts';
import { GOVDIGITAL_PROFILE } from '../../src/sandbox/abrasf-v2/baseline.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import { normalized, startAbrasfSandbox } from './abrasf-env.ts';
import { describeConformance } from './suite.ts';

/**
 * GovDigital against the generic baseline sandbox profile, in both layouts of its cities: Guaxupé/MG (3128709, layout
 * 2.01) and Araguari/MG (3103504, layout 2.00: the official nfse v2.00 XSD, the RPS signed on its Rps@Id), a Simples
 * Nacional provider: synchronous (GerarNfse), then through the asynchronous lote. The business rejection: an RPS
 * whose prestador is not the certificate's holder (E171; the lote's signer: E157).
 */
for (const codigoMunicipio of ['3128709', '3103504']) {
  const project = fiscalProfile({
    ambiente: 2,
    codigoMunicipio,
    regimeTributario: '3',
    aliquotaSimples: 6,
    inscricaoMunicipal: '123456',
  });
  const stranger = { ...project, cnpj: '45723174000110' };
  const target = {
    project,
    invoice: () => normalized(project),
    rejection: { project: stranger, invoice: normalized(stranger), code: 'E171' },
    start: () => startAbrasfSandbox(GOVDIGITAL_PROFILE, project, 0),
  };

  describeConformance({ ...target, family: defineAbrasfProvider(GOVDIGITAL_CONFIG) });
  describeConformance({
    ...target,
    rejection: { ...target.rejection, code: 'E157' },
    family: defineAbrasfProvider({ ...GOVDIGITAL_CONFIG, emission: 'emitAsyncBatch' }),
  });
}
