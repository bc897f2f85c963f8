import {
  dsfSandbox,
  elotechSandbox,
  tinusSandbox,
  elSandbox,
  fiscoSandbox,
  saatriSandbox,
  tributusSandbox,
  fiorilliAbrasfSandbox,
  gestaoissSandbox,
  gissSandbox,
  isscamacariSandbox,
  isscampinasSandbox,
  issdsfSandbox,
  issnetSandbox,
  tiplanAbrasfSandbox,
  futurizeSandbox,
  govdigitalSandbox,
  sh3Sandbox,
  sinteseSandbox,
  prodataSandbox,
  megasoftSandbox,
  webissSandbox,
  desenvolveSandbox,
  ereceitaSandbox,
  sudoesteSandbox,
} from './abrasf-v2/index.ts';
import { coplanAbrasfSandbox } from './abrasf-v2/coplan.ts';
import { sysissSandbox } from './abrasf-v2/sysiss.ts';
import { sistemas4rSandbox } from './abrasf-v2/sistemas4r.ts';
import { cigaSandbox } from './abrasf-v1/ciga.ts';
import { horusSandbox } from './abrasf-v1/horus.ts';
import { issfortalezaSandbox } from './abrasf-v1/issfortaleza.ts';
import { issintelSandbox } from './abrasf-v1/issintel.ts';
import { issnetV1Sandbox } from './abrasf-v1/issnet.ts';
import { isssalvadorSandbox } from './abrasf-v1/isssalvador.ts';
import { metropoliswebSandbox } from './abrasf-v1/metropolisweb.ts';
import { nfseBrasilSandbox } from './abrasf-v1/nfsebrasil.ts';
import { publicaSandbox } from './abrasf-v1/publica.ts';
import { speedgovSandbox } from './abrasf-v1/speedgov.ts';
import { webissV1Sandbox } from './abrasf-v1/webiss.ts';
import { bethaSandbox } from './betha/service.ts';
import { fiorilliSandbox } from './fiorilli/service.ts';
import { ginfesSandbox } from './ginfes/service.ts';
import { ipmAbrasfSandbox } from './abrasf-v2/ipm.ts';
import { isslegalSandbox } from './abrasf-v2/isslegal.ts';
import { neainformaticaSandbox } from './abrasf-v2/neainformatica.ts';
import { centiSandbox } from './abrasf-v2/centi.ts';
import { sigcorpSandbox } from './abrasf-v2/sigcorp.ts';
import { fintelissSandbox } from './abrasf-v2/finteliss.ts';
import { actconSandbox } from './abrasf-v2/actcon.ts';
import { ipmSandbox } from './ipm/service.ts';
import { bauhausSandbox } from './own-layout/bauhaus.ts';
import { elLegacySandbox } from './own-layout/el.ts';
import { eGoverneIssSandbox } from './own-layout/egoverneiss.ts';
import { equiplanoSandbox } from './own-layout/equiplano.ts';
import { agiliSandbox } from './own-layout/agili.ts';
import { sigIssWebSandbox } from './own-layout/sigissweb.ts';
import type { SandboxService } from './kit/server.ts';
import { municipalSandboxPathIn, type SandboxMounts } from './mount-path.ts';
import { abaseSandbox } from './raw-xml/abase.ts';
import { modernizacaoPublicaSandbox } from './raw-xml/modernizacao-publica.ts';
import { cittaSandbox, pronimSandbox } from './lote-gzip/sandboxes.ts';
import { silSandbox } from './soap-string/sil.ts';
import { digifredSandbox } from './soap-string/digifred.ts';
import { coplanSandbox } from './soap-string/coplan.ts';
import { saoPauloSandbox } from './sao-paulo/service.ts';
import type { SandboxSigner } from './kit/xml-signature.ts';
import { infiscSandbox, rlzSandbox, simplissSandbox, tiplanSandbox } from './sefin-clone/service.ts';

/**
 * The local stand-ins of the municipal providers, served by the same sandbox server as Sefin Nacional (one port, one
 * exchange log per family). Each entry is one provider's government service: a routes table on the sandbox kit
 * with its own rules, mounted under `/municipal/<provider>`. The service's sandbox mode points the provider's
 * engine (engine key `dps-provider:<provider>`, …) at `municipalSandboxPath`.
 *
 * A sandbox shares only official data with the engines (schemas, operation names, namespaces, error tables): it
 * never imports the engines' builders or parsers.
 */
export interface MunicipalSandboxDependencies {
  /** the key and certificate the sandbox signs what it issues with (as the provider's own server would) */
  signer: SandboxSigner;
  now: () => Date;
  logger: { info(message: string): void; warn(message: string): void };
  /** the sandbox's data directory (its stores), null in memory */
  dataDir: string | null;
}

export interface MunicipalSandbox {
  /** the engine key served, e.g. `dps-provider:betha` */
  engine: string;
  /** the path segment under /municipal/ */
  slug: string;
  create(deps: MunicipalSandboxDependencies): SandboxService;
}

export const MUNICIPAL_SANDBOXES: readonly MunicipalSandbox[] = [
  // providers: one line each
  fiorilliAbrasfSandbox,
  issnetSandbox,
  dsfSandbox,
  megasoftSandbox,
  futurizeSandbox,
  govdigitalSandbox,
  sh3Sandbox,
  sinteseSandbox,
  prodataSandbox,
  elSandbox,
  gissSandbox,
  gestaoissSandbox,
  isscamacariSandbox,
  isscampinasSandbox,
  issdsfSandbox,
  ipmAbrasfSandbox,
  isslegalSandbox,
  tiplanAbrasfSandbox,
  desenvolveSandbox,
  ereceitaSandbox,
  sudoesteSandbox,
  coplanAbrasfSandbox,
  sysissSandbox,
  sistemas4rSandbox,
  neainformaticaSandbox,
  centiSandbox,
  sigcorpSandbox,
  fintelissSandbox,
  actconSandbox,
  elotechSandbox,
  tinusSandbox,
  fiscoSandbox,
  saatriSandbox,
  tributusSandbox,
  webissSandbox,
  tiplanSandbox,
  fiorilliSandbox,
  coplanSandbox,
  digifredSandbox,
  abaseSandbox,
  modernizacaoPublicaSandbox,
  bethaSandbox,
  pronimSandbox,
  cittaSandbox,
  silSandbox,
  infiscSandbox,
  rlzSandbox,
  simplissSandbox,
  ginfesSandbox,
  isssalvadorSandbox,
  issfortalezaSandbox,
  issintelSandbox,
  issnetV1Sandbox,
  horusSandbox,
  cigaSandbox,
  speedgovSandbox,
  metropoliswebSandbox,
  nfseBrasilSandbox,
  publicaSandbox,
  webissV1Sandbox,
  saoPauloSandbox,
  ipmSandbox,
  elLegacySandbox,
  bauhausSandbox,
  eGoverneIssSandbox,
  equiplanoSandbox,
  agiliSandbox,
  sigIssWebSandbox,
];

/** engine key → mount slug of every municipal sandbox (what the sandbox process reports to the service) */
export const MUNICIPAL_SANDBOX_MOUNTS: SandboxMounts = Object.fromEntries(
  MUNICIPAL_SANDBOXES.map((s) => [s.engine, s.slug]),
);

/** The base path of a provider's sandbox for an environment (`/municipal/<slug>/producao|producaorestrita`). */
export function municipalSandboxPath(engine: string, ambiente: 1 | 2): string {
  return municipalSandboxPathIn(MUNICIPAL_SANDBOX_MOUNTS, engine, ambiente);
}
