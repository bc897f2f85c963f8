import type { FamilyDefinition } from '../kit/family.ts';
import { ipmDefinition } from './definition.ts';

/** IPM's own layout (family `ipm`, briefs/providers-own.md §2): one line per provider. */
export const IPM_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  'ipm:ipm': ipmDefinition,
};
