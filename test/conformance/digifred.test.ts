import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { digifredFamily } from '../../src/engines/dps-provider/digifred.ts';
import { digifredSandbox } from '../../src/sandbox/soap-string/digifred.ts';
import { normalized, startMunicipalSandbox } from './soap-string-support.ts';
import { describeConformance } from './suite.ts';

/**
 * Digifred against its sandbox (homologation): a regime-1 provider in Alpestre/RS (a Digifred city of the
 * registry) with the IBS/CBS defaults.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '4300505',
  ...IBS_CBS_FRAMING,
});

describeConformance({
  family: digifredFamily,
  project,
  invoice: () => normalized(project),
  // a production DPS (tpAmb 1) sent to the homologation environment: E0006
  rejection: { project: { ...project, ambiente: 1 }, invoice: normalized({ ...project, ambiente: 1 }), code: 'E0006' },
  start: () => startMunicipalSandbox(digifredSandbox, project),
});
