import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import type { AbrasfProviderConfig } from './config.ts';

/**
 * The tax-reform (IBS/CBS) groups some ABRASF providers added to their 2.04 types (§12.B.13), from the normalised
 * framing (domain/invoice/ibscbs.ts: cIndOp, CST, cClassTrib, NBS), when the configuration asks for them:
 * - `valores` (GISS tipos-v2_04.xsd, TCRTCInfoIBSCBS): `IBSCBS` last in Servico/Valores — finNFSe, indFinal, cIndOp,
 *   tpOper, tpEnteGov, indDest, valores{trib{gIBSCBS{CST, cClassTrib}}, cLocalidadeIncid, pRedutor} — and the NBS in
 *   Servico/CodigoNbs (9 digits). No recipient group exists there; pRedutor is 0.00 (no reduction is modelled).
 * Nothing is written without a resolved framing (the fiscal calendar decides whether one is required).
 */
const el = (name: string, value: string | number | null | undefined) =>
  value === null || value === undefined || value === '' ? '' : `<${name}>${escapeXmlText(String(value))}</${name}>`;

export function ibsCbsInValores(config: AbrasfProviderConfig, invoice: NormalizedInvoice, incidencia: string): string {
  const ibs = invoice.ibscbs;
  if (config.formats.ibscbs !== 'valores' || !ibs) return '';
  return (
    `<IBSCBS>${el('finNFSe', 0)}${el('indFinal', ibs.consumidorFinal ? 1 : 0)}${el('cIndOp', ibs.indicadorOperacao)}` +
    `${el('tpOper', ibs.tipoOperacao)}${el('tpEnteGov', ibs.tipoEnteGovernamental)}${el('indDest', ibs.indDest)}` +
    `<valores><trib><gIBSCBS>${el('CST', ibs.cst)}${el('cClassTrib', ibs.classificacaoTributaria)}</gIBSCBS></trib>` +
    `${el('cLocalidadeIncid', incidencia)}${el('pRedutor', '0.00')}</valores></IBSCBS>`
  );
}

/** Servico/CodigoNbs (9 digits) where the provider's reform layout carries it. */
export function codigoNbs(config: AbrasfProviderConfig, invoice: NormalizedInvoice): string | null {
  return config.formats.ibscbs === 'valores' ? (invoice.ibscbs?.nbs ?? null) : null;
}
