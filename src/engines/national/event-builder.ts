import { formatDateTimeWithOffset } from '../../xml/datetime.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import { toLatin1Line } from '../../xml/latin1.ts';

export const NFSE_NAMESPACE = 'http://www.sped.fazenda.gov.br/nfse';
export const NATIONAL_LAYOUT_VERSION = '1.01';
export const CANCELLATION_EVENT_TYPE = '101101';
/** xMotivo used when the caller gives no reason, and the suffix that pads a reason shorter than 15 characters. */
export const DEFAULT_CANCELLATION_REASON = 'Cancelamento solicitado pelo emitente';
/** cMotivo when none is given: 9 (Outros), since the API does not know the reason. */
export const DEFAULT_CANCELLATION_CODE = 9;

const REASON_MIN_LENGTH = 15;
const REASON_MAX_LENGTH = 255;
const BRASILIA_OFFSET_MINUTES = -180;

export interface CancellationRequestInput {
  /** Access key of the NFS-e, 50 digits. */
  chaveAcesso: string;
  /** 1 produção, 2 homologação (produção restrita). */
  tpAmb: 1 | 2;
  author: { cnpj: string } | { cpf: string };
  motivo?: string | null;
  /** 1 Erro na emissão, 2 Serviço não prestado, 9 Outros (default). */
  cMotivo?: 1 | 2 | 9;
  dhEvento: Date;
  verAplic: string;
  /** Offset used to write dhEvento; default -180 (Brasília). */
  utcOffsetMinutes?: number;
}

export interface CancellationRequest {
  /** Unsigned `pedRegEvento`, canonical form, no XML declaration; sign it with elementName 'infPedReg'. */
  xml: string;
  /** `PRE` + chave + `101101` (59 characters), the Id of infPedReg. */
  id: string;
}

/**
 * The xMotivo actually sent (schema type TSMotivo: 15 to 255 characters of U+0020–U+00FF, no leading or trailing
 * space, no line breaks). Whitespace runs become one space, typographic quotes and dashes become ASCII, other
 * characters outside Latin-1 lose their accents or are dropped. A missing reason becomes
 * DEFAULT_CANCELLATION_REASON, a shorter one gets it appended, a longer one is cut at 255 characters.
 */
export function normalizeCancellationReason(motivo?: string | null): string {
  const reason = toLatin1Line(motivo ?? '', REASON_MAX_LENGTH);
  if (reason.length === 0) return DEFAULT_CANCELLATION_REASON;
  if (reason.length < REASON_MIN_LENGTH) return `${reason} - ${DEFAULT_CANCELLATION_REASON.toLowerCase()}`;
  return reason;
}

function requireDigits(value: string, length: number, field: string): string {
  if (typeof value !== 'string' || value.length !== length || !/^[0-9]+$/.test(value)) {
    throw new Error(`buildCancellationRequest: ${field} must be ${length} digits`);
  }
  return value;
}

/** The unsigned cancellation request (event e101101) for `POST /nfse/{chaveAcesso}/eventos`. */
export function buildCancellationRequest(input: CancellationRequestInput): CancellationRequest {
  const chave = requireDigits(input.chaveAcesso, 50, 'chaveAcesso');
  if (input.tpAmb !== 1 && input.tpAmb !== 2) throw new Error('buildCancellationRequest: tpAmb must be 1 or 2');
  const cMotivo = input.cMotivo ?? DEFAULT_CANCELLATION_CODE;
  if (cMotivo !== 1 && cMotivo !== 2 && cMotivo !== 9) {
    throw new Error('buildCancellationRequest: cMotivo must be 1, 2 or 9');
  }
  const verAplic = input.verAplic;
  if (typeof verAplic !== 'string' || !/^[!-\u00FF]([ -\u00FF]{0,18}[!-\u00FF])?$/.test(verAplic)) {
    throw new Error('buildCancellationRequest: verAplic must have 1 to 20 Latin-1 characters, not padded');
  }
  const author =
    'cnpj' in input.author
      ? `<CNPJAutor>${requireDigits(input.author.cnpj, 14, 'author.cnpj')}</CNPJAutor>`
      : `<CPFAutor>${requireDigits(input.author.cpf, 11, 'author.cpf')}</CPFAutor>`;
  const dhEvento = formatDateTimeWithOffset(input.dhEvento, input.utcOffsetMinutes ?? BRASILIA_OFFSET_MINUTES);
  const id = `PRE${chave}${CANCELLATION_EVENT_TYPE}`;
  const xml =
    `<pedRegEvento xmlns="${NFSE_NAMESPACE}" versao="${NATIONAL_LAYOUT_VERSION}"><infPedReg Id="${id}">` +
    `<tpAmb>${input.tpAmb}</tpAmb><verAplic>${escapeXmlText(verAplic)}</verAplic><dhEvento>${dhEvento}</dhEvento>` +
    `${author}<chNFSe>${chave}</chNFSe>` +
    `<e${CANCELLATION_EVENT_TYPE}><xDesc>Cancelamento de NFS-e</xDesc><cMotivo>${cMotivo}</cMotivo>` +
    `<xMotivo>${escapeXmlText(normalizeCancellationReason(input.motivo))}</xMotivo></e${CANCELLATION_EVENT_TYPE}>` +
    '</infPedReg></pedRegEvento>';
  return { xml, id };
}
