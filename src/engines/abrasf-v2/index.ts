import type { FamilyDefinition } from '../kit/family.ts';
import { defineAbrasfProvider } from './define.ts';
import { FIORILLI_CONFIG } from './providers/fiorilli.ts';
import { WEBISS_CONFIG } from './providers/webiss.ts';

export type { AbrasfProviderConfig } from './config.ts';
export { defineAbrasfProvider } from './define.ts';

export const fiorilliAbrasfFamily = defineAbrasfProvider(FIORILLI_CONFIG);
export const webissFamily = defineAbrasfProvider(WEBISS_CONFIG);

/**
 * The ABRASF 2.0x providers (family `abrasf-v2`), keyed by engine key `abrasf-v2:<provider in lower case>`: each a
 * configuration of the one generic base (define.ts). One line per provider, in alphabetical order.
 */
export const ABRASF_V2_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  'abrasf-v2:fiorilli': fiorilliAbrasfFamily,
  'abrasf-v2:webiss': webissFamily,
};
