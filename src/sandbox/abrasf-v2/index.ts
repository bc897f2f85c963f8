import type { MunicipalSandbox } from '../municipal.ts';
import {
  type AbrasfSandboxProfile,
  EL_PROFILE,
  ELOTECH_PROFILE,
  FIORILLI_PROFILE,
  WEBISS_PROFILE,
} from './profiles.ts';
import { GOVDIGITAL_PROFILE, PRODATA_PROFILE, SH3_PROFILE, SINTESE_PROFILE } from './baseline.ts';
import { FUTURIZE_PROFILE } from './futurize.ts';
import { MEGASOFT_PROFILE } from './megasoft.ts';
import { GISS_PROFILE } from './giss.ts';
import { DSF_PROFILE } from './dsf.ts';
import { ISSNET_PROFILE } from './issnet.ts';
import { createAbrasfService } from './service.ts';
import { TINUS_PROFILE } from './tinus.ts';
import { FISCO_PROFILE } from './fisco.ts';
import { SAATRI_PROFILE } from './saatri.ts';
import { TRIBUTUS_PROFILE } from './tributus.ts';
import {
  DESENVOLVE_PROFILE,
  ERECEITA_PROFILE,
  GESTAOISS_PROFILE,
  ISSCAMACARI_PROFILE,
  ISSCAMPINAS_PROFILE,
  ISSDSF_PROFILE,
  SUDOESTE_PROFILE,
  TIPLAN_PROFILE,
} from './baseline-providers.ts';

export { type AbrasfSandboxOptions, createAbrasfService } from './service.ts';
export { type AbrasfSandboxProfile, EL_PROFILE, FIORILLI_PROFILE, WEBISS_PROFILE } from './profiles.ts';

function sandboxOf(profile: AbrasfSandboxProfile): MunicipalSandbox {
  return { engine: profile.engine, slug: profile.slug, create: (deps) => createAbrasfService(profile, deps) };
}

/** The ABRASF 2.0x providers' sandboxes (`/municipal/abrasf-<provider>/<producao|producaorestrita>`). */
export const fiorilliAbrasfSandbox = sandboxOf(FIORILLI_PROFILE);
export const issnetSandbox = sandboxOf(ISSNET_PROFILE);
export const dsfSandbox = sandboxOf(DSF_PROFILE);
export const webissSandbox = sandboxOf(WEBISS_PROFILE);
export const megasoftSandbox = sandboxOf(MEGASOFT_PROFILE);
export const futurizeSandbox = sandboxOf(FUTURIZE_PROFILE);
export const govdigitalSandbox = sandboxOf(GOVDIGITAL_PROFILE);
export const sh3Sandbox = sandboxOf(SH3_PROFILE);
export const sinteseSandbox = sandboxOf(SINTESE_PROFILE);
export const prodataSandbox = sandboxOf(PRODATA_PROFILE);
export const elSandbox = sandboxOf(EL_PROFILE);
export const elotechSandbox = sandboxOf(ELOTECH_PROFILE);
export const tinusSandbox = sandboxOf(TINUS_PROFILE);
export const gissSandbox = sandboxOf(GISS_PROFILE);
export const fiscoSandbox = sandboxOf(FISCO_PROFILE);
export const saatriSandbox = sandboxOf(SAATRI_PROFILE);
export const tributusSandbox = sandboxOf(TRIBUTUS_PROFILE);
export const gestaoissSandbox = sandboxOf(GESTAOISS_PROFILE);
export const isscamacariSandbox = sandboxOf(ISSCAMACARI_PROFILE);
export const isscampinasSandbox = sandboxOf(ISSCAMPINAS_PROFILE);
export const issdsfSandbox = sandboxOf(ISSDSF_PROFILE);
export const tiplanAbrasfSandbox = sandboxOf(TIPLAN_PROFILE);
export const desenvolveSandbox = sandboxOf(DESENVOLVE_PROFILE);
export const ereceitaSandbox = sandboxOf(ERECEITA_PROFILE);
export const sudoesteSandbox = sandboxOf(SUDOESTE_PROFILE);
