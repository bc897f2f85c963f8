import type { FamilyDefinition } from '../kit/family.ts';
import { defineAbrasfV1Provider } from './define.ts';
import { cigaFamily } from './providers/ciga.ts';
import { horusFamily } from './providers/horus.ts';
import { issFortalezaFamily } from './providers/issfortaleza.ts';
import { issIntelFamily } from './providers/issintel.ts';
import { ISSNET_V1_CONFIG } from './providers/issnet.ts';
import { ISSSALVADOR_CONFIG } from './providers/isssalvador.ts';
import { METROPOLISWEB_CONFIG } from './providers/metropolisweb.ts';
import { nfseBrasilFamily } from './providers/nfsebrasil.ts';
import { PUBLICA_CONFIG } from './providers/publica.ts';
import { SPEEDGOV_CONFIG } from './providers/speedgov.ts';
import { WEBISS_V1_CONFIG } from './providers/webiss.ts';

export type { AbrasfV1ProviderConfig } from './config.ts';
export { defineAbrasfV1Provider } from './define.ts';

/**
 * The ABRASF 1.0x providers (family `abrasf-v1`), keyed by engine key `abrasf-v1:<provider in lower case>`: each a
 * configuration of the one generic base (define.ts), or, for a GINFES clone (ISSFortaleza), the GINFES definition in
 * the provider's SOAP idiom. One line per provider, in alphabetical order.
 */
export const ABRASF_V1_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  'abrasf-v1:ciga': cigaFamily,
  'abrasf-v1:horus': horusFamily,
  'abrasf-v1:issfortaleza': issFortalezaFamily,
  'abrasf-v1:issintel': issIntelFamily,
  'abrasf-v1:issnet': defineAbrasfV1Provider(ISSNET_V1_CONFIG),
  'abrasf-v1:isssalvador': defineAbrasfV1Provider(ISSSALVADOR_CONFIG),
  'abrasf-v1:metropolisweb': defineAbrasfV1Provider(METROPOLISWEB_CONFIG),
  'abrasf-v1:nfsebrasil': nfseBrasilFamily,
  'abrasf-v1:publica': defineAbrasfV1Provider(PUBLICA_CONFIG),
  'abrasf-v1:speedgov': defineAbrasfV1Provider(SPEEDGOV_CONFIG),
  'abrasf-v1:webiss': defineAbrasfV1Provider(WEBISS_V1_CONFIG),
};
