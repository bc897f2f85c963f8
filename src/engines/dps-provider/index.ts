import type { FamilyDefinition } from '../kit/family.ts';

/**
 * The providers that take the national DPS 1.01 over their own transport (family `dps-provider`, ACBr "API
 * Própria"; briefs/providers-own.md §4): one definition per provider, keyed by engine key
 * (`dps-provider:<provider in lower case>`), each a transport profile over the national DPS builder and signer.
 * One line per provider, in alphabetical order.
 */
export const DPS_PROVIDER_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  // providers: one line each
};
