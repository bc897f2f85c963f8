/**
 * The providers of the `LoteXmlGZipB64` idiom (briefs/providers-own.md §4, Pronim and Citta), as data: where each
 * takes what, the spelling of its keys, and what its lote carries. The sandbox service (./service.ts) accepts only
 * what a profile names — the conservative readings written at the top of each engine definition.
 */

export interface LoteGzipProfile {
  /** The ACBr provider name. */
  provider: string;
  /** The exchange log's directory (kebab-case). */
  family: string;
  /** The path segment under `/municipal/`. */
  slug: string;
  /** The request key, spelled exactly. */
  loteKey: string;
  /** What a lote item of the emission carries: a signed DPS, or a taxpayer-built NFSe signed on infNFSe. */
  payload: 'DPS' | 'NFSe';
  /** What an event lote item carries: a signed pedRegEvento, or a taxpayer-built evento signed on infEvento. */
  eventPayload: 'pedRegEvento' | 'evento';
  /** The answer's key spelling: `camel` (lote, chaveAcesso) or the ADN's `pascal` (Lote, ChaveAcesso). */
  casing: 'camel' | 'pascal';
  /** Route paths below `/municipal/<slug>/<ambiente>`. */
  paths: {
    emit: string;
    /** where events go (the same path as emit for Pronim) */
    events: string;
    /** the DPS consultation (`:cnpj/:serie/:nDPS` or `:nDPS`) */
    dps: string;
    /** the note by its key, when the provider has one */
    nfse: string | null;
    /** the events of a note by its key */
    noteEvents: string;
  };
}

export const PRONIM_PROFILE: LoteGzipProfile = {
  provider: 'Pronim',
  family: 'dps-provider-pronim',
  slug: 'pronim',
  loteKey: 'loteXmlGZipB64',
  payload: 'DPS',
  eventPayload: 'pedRegEvento',
  casing: 'camel',
  paths: {
    emit: '/EnviarSincrono',
    events: '/EnviarSincrono',
    dps: '/ConsultarDPS/:cnpj/:serie/:nDPS',
    nfse: '/ConsultarNFSe/:chave',
    noteEvents: '/ConsultarEventos/:chave',
  },
};

export const CITTA_PROFILE: LoteGzipProfile = {
  provider: 'Citta',
  family: 'dps-provider-citta',
  slug: 'citta',
  loteKey: 'LoteXmlGZipB64',
  payload: 'NFSe',
  eventPayload: 'evento',
  casing: 'pascal',
  paths: {
    emit: '/',
    events: '/eventos',
    dps: '/:nDPS',
    nfse: null,
    noteEvents: '/eventos/:chave',
  },
};
