import type { FamilyDefinition } from '../kit/family.ts';
import { ginfesFamily } from './family.ts';

/** The GINFES family's engines by engine key (one provider: ACBr `Ginfes`). */
export const GINFES_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  'ginfes:ginfes': ginfesFamily,
};
