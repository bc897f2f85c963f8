import type { FamilyDefinition } from '../kit/family.ts';
import { agiliDefinition } from './agili.ts';
import { eGoverneIssDefinition } from './egoverneiss.ts';
import { bauhausDefinition } from './bauhaus.ts';
import { elLegacyDefinition } from './el.ts';
import { equiplanoDefinition } from './equiplano.ts';
import { sigIssWebDefinition } from './sigissweb.ts';

/**
 * Providers with a layout of their own (family `own-layout`, docs/engine-families.md): one definition per provider,
 * engine key `own-layout:<provider in lower case>`. One line per provider.
 */
export const OWN_LAYOUT_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  'own-layout:el': elLegacyDefinition,
  'own-layout:bauhaus': bauhausDefinition,
  'own-layout:egoverneiss': eGoverneIssDefinition,
  'own-layout:equiplano': equiplanoDefinition,
  'own-layout:agili': agiliDefinition,
  'own-layout:sigissweb': sigIssWebDefinition,
};
