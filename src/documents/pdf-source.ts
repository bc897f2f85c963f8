import { municipalityRegistry } from '../engines/routing/municipality-registry.ts';
import type { EngineFamily } from '../engines/types.ts';
import { isAbrasfNfse } from './danfse/abrasf-model.ts';

/**
 * Where the PDF of an issued note comes from (spec 4.4), decided per note:
 * - `local`: rendered here from the NFS-e XML — the national DANFSe v2.0, or the DANFSe-like rendering of an
 *   ABRASF NFS-e for a municipal provider that publishes no PDF;
 * - `engine`: the engine's own answer (a provider download or link: IPM, São Paulo, GINFES…);
 * - `portal`: the consultation page the municipality publishes for its notes (the registry's link template,
 *   e.g. WebISS `…/externo/nfse/visualizar/%Cnpj%/%CodVerif%/%NumeroNFSe%`), to which GET /pdf redirects;
 * - `none`: neither (501 PDF_NOT_SUPPORTED).
 */
export type PdfSource = { kind: 'local' } | { kind: 'engine' } | { kind: 'portal'; url: string } | { kind: 'none' };

export interface PdfNote {
  nfseXml: string | null;
  numeroNfse: string | null;
  verificationCode: string | null;
  accessKey: string | null;
  ambiente: number;
}

export interface PdfProject {
  cnpj: string;
  inscricaoMunicipal: string | null;
  codigoMunicipio: string | null;
}

/** Fills a registry link template (ACBr's placeholders); null when the note lacks a value the link needs. */
export function fillLinkTemplate(template: string, note: PdfNote, project: PdfProject): string | null {
  const values: Record<string, string | null> = {
    '%Cnpj%': project.cnpj,
    '%InscMunic%': project.inscricaoMunicipal,
    '%NumeroNFSe%': note.numeroNfse,
    '%CodVerif%': note.verificationCode,
    '%ChaveAcesso%': note.accessKey ?? '',
  };
  let missing = false;
  const url = template.replace(/%\w+%/g, (placeholder) => {
    const value = values[placeholder];
    if (value === undefined) return placeholder;
    if (value === null || value === '') {
      if (placeholder !== '%ChaveAcesso%') missing = true;
      return '';
    }
    return encodeURIComponent(value);
  });
  return missing ? null : url;
}

export function pdfSourceOf(engine: EngineFamily, note: PdfNote, project: PdfProject | null): PdfSource {
  const declared = engine.capabilities.pdf;
  if (declared === 'local') return { kind: 'local' };
  if (declared === 'portal') return { kind: 'engine' };
  const route = project?.codigoMunicipio ? municipalityRegistry().find(project.codigoMunicipio) : null;
  const template = route?.parameters?.links?.[note.ambiente === 1 ? 'production' : 'homologation'];
  const url = template && project ? fillLinkTemplate(template, note, project) : null;
  if (url) return { kind: 'portal', url };
  if (note.nfseXml && isAbrasfNfse(note.nfseXml)) return { kind: 'local' };
  return { kind: 'none' };
}
