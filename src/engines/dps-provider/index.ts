import type { FamilyDefinition } from '../kit/family.ts';
import { fiorilliDefinition } from './fiorilli.ts';
import { bethaFamily } from './betha.ts';
import { cittaFamily } from './citta.ts';
import { pronimFamily } from './pronim.ts';
import { abaseDefinition } from './abase.ts';
import { modernizacaoPublicaDefinition } from './modernizacao-publica.ts';
import { silTecnologiaFamily } from './sil-tecnologia.ts';
import { digifredFamily } from './digifred.ts';
import { coplanFamily } from './coplan.ts';
import { infiscDefinition, rlzDefinition, simplissDefinition, tiplanDefinition } from './sefin-clone.ts';

/**
 * The providers that take the national DPS 1.01 over their own transport (family `dps-provider`, ACBr "API
 * Própria"; briefs/providers-own.md §4): one definition per provider, keyed by engine key
 * (`dps-provider:<provider in lower case>`), each a transport profile over the national DPS builder and signer.
 * One line per provider, in alphabetical order.
 */
export const DPS_PROVIDER_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  // providers: one line each
  'dps-provider:tiplan': tiplanDefinition,
  'dps-provider:fiorilli': fiorilliDefinition,
  'dps-provider:coplan': coplanFamily,
  'dps-provider:digifred': digifredFamily,
  'dps-provider:betha': bethaFamily,
  'dps-provider:citta': cittaFamily,
  'dps-provider:pronim': pronimFamily,
  'dps-provider:abase': abaseDefinition,
  'dps-provider:modernizacaopublica': modernizacaoPublicaDefinition,
  'dps-provider:siltecnologia': silTecnologiaFamily,
  'dps-provider:infisc': infiscDefinition,
  'dps-provider:rlz': rlzDefinition,
  'dps-provider:simpliss': simplissDefinition,
};
