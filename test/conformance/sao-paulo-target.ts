import type { FamilyDefinition } from '../../src/engines/kit/family.ts';
import { saoPauloSandbox } from '../../src/sandbox/sao-paulo/service.ts';
import { fiscalProfile, IBS_CBS_FRAMING } from '../support/fiscal-profile.ts';
import { normalized, startMunicipalSandbox } from './soap-string-support.ts';

/**
 * São Paulo (NF-e Paulistana v02) as the conformance suite sees it, in either emission mode: a regime-1 provider
 * with its CCM, the municipal service code and the IBS/CBS defaults the v02 RPS requires. The business-rule
 * rejection: a service code the city does not have (306, the sandbox's stand-in for the unpublished table: codes
 * below 1000).
 */
export const SAO_PAULO_PROJECT = fiscalProfile({
  ambiente: 1,
  codigoMunicipio: '3550308',
  inscricaoMunicipal: '31000000',
  codigoServicoSp: '02658',
  ...IBS_CBS_FRAMING,
});
const unknownCode = { ...SAO_PAULO_PROJECT, codigoServicoSp: '00999' };

export function saoPauloConformance(family: FamilyDefinition) {
  return {
    family,
    project: SAO_PAULO_PROJECT,
    invoice: () => normalized(SAO_PAULO_PROJECT),
    rejection: { project: unknownCode, invoice: normalized(unknownCode), code: '306' },
    start: () => startMunicipalSandbox(saoPauloSandbox, SAO_PAULO_PROJECT),
  };
}
