import type { FamilyDefinition } from '../kit/family.ts';
import { saoPauloFamily } from './family.ts';

/** The city of São Paulo's own layout (family `sao-paulo`, briefs/providers-own.md §1), keyed by engine key. */
export const SAO_PAULO_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  'sao-paulo:isssaopaulo': saoPauloFamily,
};
