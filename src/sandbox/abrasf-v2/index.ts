import type { MunicipalSandbox } from '../municipal.ts';
import { type AbrasfSandboxProfile, FIORILLI_PROFILE, WEBISS_PROFILE } from './profiles.ts';
import { createAbrasfService } from './service.ts';

export { type AbrasfSandboxOptions, createAbrasfService } from './service.ts';
export { type AbrasfSandboxProfile, FIORILLI_PROFILE, WEBISS_PROFILE } from './profiles.ts';

function sandboxOf(profile: AbrasfSandboxProfile): MunicipalSandbox {
  return { engine: profile.engine, slug: profile.slug, create: (deps) => createAbrasfService(profile, deps) };
}

/** The ABRASF 2.0x providers' sandboxes (`/municipal/abrasf-<provider>/<producao|producaorestrita>`). */
export const fiorilliAbrasfSandbox = sandboxOf(FIORILLI_PROFILE);
export const webissSandbox = sandboxOf(WEBISS_PROFILE);
