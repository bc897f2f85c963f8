import type { FamilyDefinition } from '../kit/family.ts';
import { defineAbrasfProvider } from './define.ts';
import { ACTCON_CONFIG } from './providers/actcon.ts';
import { CENTI_CONFIG } from './providers/centi.ts';
import { DSF_CONFIG } from './providers/dsf.ts';
import { EL_CONFIG } from './providers/el.ts';
import { ELOTECH_CONFIG } from './providers/elotech.ts';
import { FINTELISS_CONFIG, servesFintelIss200 } from './providers/finteliss.ts';
import { FIORILLI_CONFIG } from './providers/fiorilli.ts';
import { FUTURIZE_CONFIG } from './providers/futurize.ts';
import { GOVDIGITAL_CONFIG } from './providers/govdigital.ts';
import { TINUS_CONFIG } from './providers/tinus.ts';
import { GISS_CONFIG } from './providers/giss.ts';
import { ISSNET_CONFIG } from './providers/issnet.ts';
import { MEGASOFT_CONFIG } from './providers/megasoft.ts';
import { PRODATA_CONFIG } from './providers/prodata.ts';
import { SH3_CONFIG } from './providers/sh3.ts';
import { SINTESE_CONFIG } from './providers/sintese.ts';
import { WEBISS_CONFIG } from './providers/webiss.ts';
import { DESENVOLVE_CONFIG } from './providers/desenvolve.ts';
import { ERECEITA_CONFIG } from './providers/ereceita.ts';
import { COPLAN_CONFIG } from './providers/coplan.ts';
import { SUDOESTE_CONFIG } from './providers/sudoeste.ts';
import { SYSISS_CONFIG } from './providers/sysiss.ts';
import { SISTEMAS4R_CONFIG } from './providers/sistemas4r.ts';
import { ISSCAMPINAS_CONFIG, ISSDSF_CONFIG } from './providers/dsf-platform.ts';
import { GESTAOISS_CONFIG } from './providers/gestaoiss.ts';
import { ISSCAMACARI_CONFIG } from './providers/isscamacari.ts';
import { IPM_CONFIG } from './providers/ipm.ts';
import { ISSLEGAL_CONFIG } from './providers/isslegal.ts';
import { NEAINFORMATICA_CONFIG } from './providers/neainformatica.ts';
import { TIPLAN_CONFIG } from './providers/tiplan.ts';
import { FISCO_CONFIG } from './providers/fisco.ts';
import { SAATRI_CONFIG } from './providers/saatri.ts';
import { SIGCORP_CONFIG } from './providers/sigcorp.ts';
import { TRIBUTUS_CONFIG } from './providers/tributus.ts';

export type { AbrasfProviderConfig } from './config.ts';
export { defineAbrasfProvider } from './define.ts';

export const fiorilliAbrasfFamily = defineAbrasfProvider(FIORILLI_CONFIG);
export const webissFamily = defineAbrasfProvider(WEBISS_CONFIG);

/**
 * The ABRASF 2.0x providers (family `abrasf-v2`), keyed by engine key `abrasf-v2:<provider in lower case>`: each a
 * configuration of the one generic base (define.ts). One line per provider, in alphabetical order.
 */
export const ABRASF_V2_DEFINITIONS: Readonly<Record<string, FamilyDefinition>> = {
  'abrasf-v2:actcon': defineAbrasfProvider(ACTCON_CONFIG),
  'abrasf-v2:centi': defineAbrasfProvider(CENTI_CONFIG),
  'abrasf-v2:coplan': defineAbrasfProvider(COPLAN_CONFIG),
  'abrasf-v2:desenvolve': defineAbrasfProvider(DESENVOLVE_CONFIG),
  'abrasf-v2:dsf': defineAbrasfProvider(DSF_CONFIG),
  'abrasf-v2:el': defineAbrasfProvider(EL_CONFIG),
  'abrasf-v2:elotech': defineAbrasfProvider(ELOTECH_CONFIG),
  'abrasf-v2:ereceita': defineAbrasfProvider(ERECEITA_CONFIG),
  'abrasf-v2:finteliss': { ...defineAbrasfProvider(FINTELISS_CONFIG), serves: servesFintelIss200 },
  'abrasf-v2:fiorilli': fiorilliAbrasfFamily,
  'abrasf-v2:fisco': defineAbrasfProvider(FISCO_CONFIG),
  'abrasf-v2:futurize': defineAbrasfProvider(FUTURIZE_CONFIG),
  'abrasf-v2:gestaoiss': defineAbrasfProvider(GESTAOISS_CONFIG),
  'abrasf-v2:govdigital': defineAbrasfProvider(GOVDIGITAL_CONFIG),
  'abrasf-v2:giss': defineAbrasfProvider(GISS_CONFIG),
  'abrasf-v2:ipm': defineAbrasfProvider(IPM_CONFIG),
  'abrasf-v2:isscamacari': defineAbrasfProvider(ISSCAMACARI_CONFIG),
  'abrasf-v2:isscampinas': defineAbrasfProvider(ISSCAMPINAS_CONFIG),
  'abrasf-v2:issdsf': defineAbrasfProvider(ISSDSF_CONFIG),
  'abrasf-v2:isslegal': defineAbrasfProvider(ISSLEGAL_CONFIG),
  'abrasf-v2:issnet': defineAbrasfProvider(ISSNET_CONFIG),
  'abrasf-v2:megasoft': defineAbrasfProvider(MEGASOFT_CONFIG),
  'abrasf-v2:neainformatica': defineAbrasfProvider(NEAINFORMATICA_CONFIG),
  'abrasf-v2:prodata': defineAbrasfProvider(PRODATA_CONFIG),
  'abrasf-v2:saatri': defineAbrasfProvider(SAATRI_CONFIG),
  'abrasf-v2:sh3': defineAbrasfProvider(SH3_CONFIG),
  'abrasf-v2:sigcorp': defineAbrasfProvider(SIGCORP_CONFIG),
  'abrasf-v2:sintese': defineAbrasfProvider(SINTESE_CONFIG),
  'abrasf-v2:sistemas4r': defineAbrasfProvider(SISTEMAS4R_CONFIG),
  'abrasf-v2:sudoeste': defineAbrasfProvider(SUDOESTE_CONFIG),
  'abrasf-v2:sysiss': defineAbrasfProvider(SYSISS_CONFIG),
  'abrasf-v2:tinus': defineAbrasfProvider(TINUS_CONFIG),
  'abrasf-v2:tiplan': defineAbrasfProvider(TIPLAN_CONFIG),
  'abrasf-v2:tributus': defineAbrasfProvider(TRIBUTUS_CONFIG),
  'abrasf-v2:webiss': webissFamily,
};
