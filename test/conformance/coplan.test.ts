import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { coplanFamily } from '../../src/engines/dps-provider/coplan.ts';
import { coplanSandbox } from '../../src/sandbox/soap-string/coplan.ts';
import { normalized, startMunicipalSandbox } from './soap-string-support.ts';
import { describeConformance } from './suite.ts';

/**
 * Coplan against its sandbox (homologation): a regime-1 provider in Barra Mansa/RJ (a Coplan city of the
 * registry) with the IBS/CBS defaults.
 */
const project = fiscalProfile({
  ambiente: 2,
  codigoMunicipio: '3300407',
  ...IBS_CBS_FRAMING,
});

describeConformance({
  family: coplanFamily,
  project,
  invoice: () => normalized(project),
  // a production DPS (tpAmb 1) sent to the homologation environment: E0006
  rejection: { project: { ...project, ambiente: 1 }, invoice: normalized({ ...project, ambiente: 1 }), code: 'E0006' },
  start: () => startMunicipalSandbox(coplanSandbox, project),
});
