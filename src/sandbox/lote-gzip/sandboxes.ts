import type { MunicipalSandbox } from '../municipal.ts';
import { CITTA_PROFILE, PRONIM_PROFILE } from './profiles.ts';
import { createLoteGzipService } from './service.ts';

/** The `LoteXmlGZipB64` providers' entries of the municipal sandboxes (../municipal.ts). */
export const pronimSandbox: MunicipalSandbox = {
  engine: 'dps-provider:pronim',
  slug: PRONIM_PROFILE.slug,
  create: (deps) => createLoteGzipService(PRONIM_PROFILE, deps),
};

export const cittaSandbox: MunicipalSandbox = {
  engine: 'dps-provider:citta',
  slug: CITTA_PROFILE.slug,
  create: (deps) => createLoteGzipService(CITTA_PROFILE, deps),
};
