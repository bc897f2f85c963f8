import { type MensagemProcessamento, officialMessage, SEFIN_MESSAGES } from './codes.ts';
import { inscricaoRoot } from './dps.ts';
import type { Ambiente, IssuedRecord } from './store.ts';
import { child, childElements, escapeXml, textAt } from '../kit/xml-dom.ts';
import { NFSE_NS } from './xml.ts';

/** Pedido de registro de evento (Anexo II) → evento, for the events a taxpayer may send. */

export interface PedidoEvento {
  id: string;
  tpAmb: string;
  dhEvento: string;
  cnpjAutor: string | null;
  cpfAutor: string | null;
  chNFSe: string;
  /** Six digits, e.g. `101101`. */
  tipoEvento: string;
  infPedReg: Element;
}

export const EVENT_NAMES: Record<string, string> = {
  '101101': 'Cancelamento de NFS-e',
  '105102': 'Cancelamento de NFS-e por Substituição',
  '101103': 'Solicitação de Análise Fiscal para Cancelamento de NFS-e',
  '105104': 'Cancelamento de NFS-e Deferido por Análise Fiscal',
  '105105': 'Cancelamento de NFS-e Indeferido por Análise Fiscal',
  '202201': 'Manifestação de NFS-e - Confirmação do Prestador',
  '203202': 'Manifestação de NFS-e - Confirmação do Tomador',
  '204203': 'Manifestação de NFS-e - Confirmação do Intermediário',
  '205204': 'Manifestação de NFS-e - Confirmação Tácita',
  '202205': 'Manifestação de NFS-e - Rejeição do Prestador',
  '203206': 'Manifestação de NFS-e - Rejeição do Tomador',
  '204207': 'Manifestação de NFS-e - Rejeição do Intermediário',
  '205208': 'Manifestação de NFS-e - Anulação da Rejeição',
  '305101': 'Cancelamento de NFS-e por Ofício',
  '305102': 'Bloqueio de NFS-e por Ofício',
  '305103': 'Desbloqueio de NFS-e por Ofício',
};

/** Events that end the note's life: after one of them, a cancellation is refused (E0840). */
const CANCELLING = new Set(['101101', '105102', '105104', '305101']);

export function readPedido(root: Element): PedidoEvento {
  const infPedReg = child(root, 'infPedReg');
  if (!infPedReg) throw new Error('pedRegEvento without infPedReg (the schema should have refused it)');
  const eventElement = childElements(infPedReg).find((e) => /^e[0-9]{6}$/.test(e.localName ?? ''));
  return {
    id: infPedReg.getAttribute('Id') ?? '',
    tpAmb: textAt(infPedReg, 'tpAmb') ?? '',
    dhEvento: textAt(infPedReg, 'dhEvento') ?? '',
    cnpjAutor: textAt(infPedReg, 'CNPJAutor') ?? null,
    cpfAutor: textAt(infPedReg, 'CPFAutor') ?? null,
    chNFSe: textAt(infPedReg, 'chNFSe') ?? '',
    tipoEvento: eventElement ? eventElement.localName.slice(1) : '',
    infPedReg,
  };
}

/** Who may ask for each event type (Anexo II, sheet TIPO EVENTOS): the note's emitter or one of its actors. */
function authorRole(tipoEvento: string): 'emitente' | 'prestador' | 'tomador' | 'intermediario' | null {
  switch (tipoEvento) {
    case '101101':
    case '101103':
      return 'emitente';
    case '202201':
    case '202205':
      return 'prestador';
    case '203202':
    case '203206':
      return 'tomador';
    case '204203':
    case '204207':
      return 'intermediario';
    default:
      return null;
  }
}

function sameTaxpayer(a: string | null, b: string | null): boolean {
  return !!a && !!b && inscricaoRoot(a) === inscricaoRoot(b);
}

/** Rules that need the note (Anexo II RN EVENTO_PED.REG.EVENTO). */
export function checkEventRules(
  pedido: PedidoEvento,
  pathKey: string,
  env: Ambiente,
  now: Date,
  record: IssuedRecord | undefined,
  otherEnvironmentHasIt: boolean,
): MensagemProcessamento | null {
  if (pedido.id !== `PRE${pedido.chNFSe}${pedido.tipoEvento}`) {
    return officialMessage('E1827', `Id informado: ${pedido.id}; esperado: PRE${pedido.chNFSe}${pedido.tipoEvento}.`);
  }
  if (pedido.tpAmb !== String(env))
    return officialMessage('E1845', `tpAmb ${pedido.tpAmb} enviado ao ambiente ${env}.`);
  const dhEvento = Date.parse(pedido.dhEvento);
  if (Number.isNaN(dhEvento) || dhEvento > now.getTime()) {
    return officialMessage('E1843', `dhEvento ${pedido.dhEvento}; recebimento ${now.toISOString()}.`);
  }
  if (pedido.chNFSe !== pathKey) {
    return officialMessage('E0831', `chNFSe do pedido (${pedido.chNFSe}) difere da chave do recurso (${pathKey}).`);
  }
  if (!record) {
    return otherEnvironmentHasIt
      ? officialMessage('E0831', 'A NFS-e foi gerada no outro ambiente.')
      : officialMessage('E1831', `Chave ${pedido.chNFSe}.`);
  }
  const role = authorRole(pedido.tipoEvento);
  const expected =
    role === 'emitente'
      ? record.emitente
      : role === 'prestador'
        ? record.prestador
        : role === 'tomador'
          ? record.tomador
          : role === 'intermediario'
            ? record.intermediario
            : null;
  const author = pedido.cnpjAutor ?? pedido.cpfAutor;
  if (!sameTaxpayer(author, expected)) {
    const code = pedido.cnpjAutor ? 'E0813' : 'E0816';
    return officialMessage(
      code,
      role
        ? `Autor ${author}; o evento ${pedido.tipoEvento} cabe ao ${role} da NFS-e.`
        : `O evento ${pedido.tipoEvento} não é registrado a pedido do contribuinte.`,
    );
  }
  if (pedido.tipoEvento === '101101') {
    const linked = record.events.find((e) => CANCELLING.has(e.tipoEvento));
    if (linked) {
      const name = EVENT_NAMES[linked.tipoEvento] ?? linked.tipoEvento;
      return {
        codigo: 'E0840',
        descricao: SEFIN_MESSAGES.E0840.replace('<nome_evento_vinculado_a_NFS-e>', name),
        complemento: `Evento ${linked.tipoEvento} registrado em ${linked.dhProc}.`,
      };
    }
  }
  return null;
}

/** The unsigned `<evento>` document that embeds the received, signed pedRegEvento unchanged. */
export function composeEvento(input: {
  chaveAcesso: string;
  tipoEvento: string;
  nSeqEvento: number;
  dhProc: string;
  nDFSe: number;
  verAplic: string;
  pedidoRaw: string;
}): string {
  const seq3 = String(input.nSeqEvento).padStart(3, '0');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<evento xmlns="${NFSE_NS}" versao="1.01">` +
    `<infEvento Id="EVT${input.chaveAcesso}${input.tipoEvento}${seq3}">` +
    `<verAplic>${escapeXml(input.verAplic)}</verAplic>` +
    '<ambGer>2</ambGer>' +
    `<nSeqEvento>${input.nSeqEvento}</nSeqEvento>` +
    `<dhProc>${input.dhProc}</dhProc>` +
    `<nDFSe>${input.nDFSe}</nDFSe>` +
    input.pedidoRaw +
    '</infEvento>' +
    '</evento>'
  );
}
