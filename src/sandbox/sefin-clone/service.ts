import { join } from 'node:path';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { EVERYONE_REGISTERED } from '../sefin/dps.ts';
import { createSefinService } from '../sefin/service.ts';
import { SefinStore } from '../sefin/store.ts';
import { tiplanService } from './tiplan.ts';

/**
 * The municipal clones of Sefin Nacional's REST API (briefs/providers-own.md §4): SimplISS, RLZ and Infisc serve
 * Sefin's paths and JSON below each city's own base URL. Each is the Sefin sandbox's service (../sefin/service.ts:
 * reception rules, XSD, signature verification, mTLS identity checks, DPS and event rules, national-style NFS-e)
 * re-mounted at `/municipal/<slug>/<producao|producaorestrita>`, with its own store and exchange log and without
 * the national adhesion rule (E0037): these providers' cities issue there because they are not adherent.
 *
 * What it accepts is only the conservative reading the engine definitions write down
 * (src/engines/dps-provider/sefin-clone.ts): a client certificate is required (mTLS), the DPS must be signed by the
 * emitter's certificate, the request is Sefin's JSON. The provider's quirk:
 * - SimplISS answers a POST /nfse whose body is not a JSON object with a plain-text 400 (the body ACBr wraps as
 *   E9999), instead of Sefin's E1225 JSON.
 * - Tiplan serves Sefin's rules at its own paths (`/recepcao`, `/evento`, `/chave-acesso/{nDPS}`) with
 *   `{"Message": …}` framework errors, and the national read routes for its cities' notes (./tiplan.ts).
 */

export type SefinCloneSlug = 'simpliss' | 'rlz' | 'infisc' | 'tiplan';

interface CloneProfile {
  slug: SefinCloneSlug;
  name: string;
  /** rewrites a route's answer (the provider's quirks); null keeps Sefin's */
  quirk?: (req: SandboxRequest) => SandboxReply | null;
  /** the provider's own paths and error bodies over Sefin's rules (Tiplan: ./tiplan.ts) */
  reshape?: (sefin: SandboxService, store: SefinStore) => Partial<SandboxService>;
}

/** SimplISS's answer to a body it cannot bind (IIS / ASP.NET text, not JSON). */
export const SIMPLISS_NON_JSON_BODY = 'Bad Request - requisição inválida: o corpo deve ser JSON.';

const PROFILES: Record<SefinCloneSlug, CloneProfile> = {
  simpliss: {
    slug: 'simpliss',
    name: 'SimplISS',
    quirk: (req) =>
      req.routeName === 'nfse.issue' && req.json() === null
        ? { status: 400, body: SIMPLISS_NON_JSON_BODY, headers: { 'content-type': 'text/plain; charset=utf-8' } }
        : null,
  },
  rlz: { slug: 'rlz', name: 'RLZ' },
  infisc: { slug: 'infisc', name: 'Infisc' },
  tiplan: { slug: 'tiplan', name: 'Tiplan', reshape: tiplanService },
};

/** One provider's clone as a kit service. */
export function createSefinCloneService(slug: SefinCloneSlug, deps: MunicipalSandboxDependencies): SandboxService {
  const profile = PROFILES[slug];
  const store = new SefinStore(deps.dataDir ? join(deps.dataDir, `dps-provider-${slug}`, 'store.jsonl') : null, (m) =>
    deps.logger.warn(m),
  );
  const sefin = createSefinService({
    signer: deps.signer,
    store,
    now: deps.now,
    logger: {
      info: (m) => deps.logger.info(m.replace('sandbox Sefin:', `sandbox ${profile.name}:`)),
      warn: (m) => deps.logger.warn(m),
    },
    defaultIssRate: 2,
    registry: EVERYONE_REGISTERED,
    requireNationalAdherence: false,
  });
  const quirk = profile.quirk;
  const reshaped = profile.reshape?.(sefin, store) ?? {};
  return {
    ...sefin,
    ...reshaped,
    family: `dps-provider-${slug}`,
    name: profile.name,
    mount: `/municipal/${slug}/:ambiente(producao|producaorestrita)`,
    routes: (reshaped.routes ?? sefin.routes).map((route) =>
      quirk ? { ...route, handler: (req: SandboxRequest) => quirk(req) ?? route.handler(req) } : route,
    ),
    admin: [
      {
        method: 'GET',
        path: `/__sandbox/municipal/${slug}/issued`,
        handler: () => ({
          status: 200,
          body: store.all().map(({ nfseXml: _xml, events, ...rest }) => ({
            ...rest,
            events: events.map(({ eventoXml: _evt, ...event }) => event),
          })),
        }),
      },
    ],
  };
}

const sandboxOf = (slug: SefinCloneSlug): MunicipalSandbox => ({
  engine: `dps-provider:${slug}`,
  slug,
  create: (deps) => createSefinCloneService(slug, deps),
});

export const simplissSandbox = sandboxOf('simpliss');
export const rlzSandbox = sandboxOf('rlz');
export const infiscSandbox = sandboxOf('infisc');
export const tiplanSandbox = sandboxOf('tiplan');
