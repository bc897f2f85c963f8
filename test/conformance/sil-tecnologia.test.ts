import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { silTecnologiaFamily } from '../../src/engines/dps-provider/sil-tecnologia.ts';
import { silSandbox } from '../../src/sandbox/soap-string/sil.ts';
import { normalized, startMunicipalSandbox } from './soap-string-support.ts';
import { describeConformance } from './suite.ts';

/**
 * SIL/TBW against its sandbox (homologation): a regime-1 provider in Vila Velha/ES (a SilTecnologia city of the
 * registry) with the IBS/CBS defaults and the NBS SIL requires.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3205200',
  ...IBS_CBS_FRAMING,
});

describeConformance({
  family: silTecnologiaFamily,
  project,
  invoice: () => normalized(project),
  // a production DPS (tpAmb 1) sent to the homologation environment: E0006
  rejection: { project: { ...project, ambiente: 1 }, invoice: normalized({ ...project, ambiente: 1 }), code: 'E0006' },
  start: () => startMunicipalSandbox(silSandbox, project),
});
