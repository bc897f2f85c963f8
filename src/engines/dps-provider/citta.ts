import { escapeXmlText } from '../../xml/escape.ts';
import { transportFailure } from '../kit/engine.ts';
import { type CancelMessage, defineFamily, type OperationRequest, type SignedMessage } from '../kit/family.ts';
import { checkDpsRequirements } from '../national/dps-builder.ts';
import { CANCELLATION_EVENT_TYPE } from '../national/event-builder.ts';
import { NATIONAL_APP_VERSION, nationalFamily } from '../national/family.ts';
import { classifyFailure } from '../national/responses.ts';
import type { IssuedDocument, Outcome, PrepareInput } from '../types.ts';
import {
  ACCEPT_JSON,
  issuedFromQueryItem,
  loteBase,
  loteRequest,
  parseEventsAnswer,
  parseJson,
  parseLoteCancellation,
  parseLoteIssue,
  requireKey,
} from './lote-gzip.ts';
import { buildNfseWrapper } from './nfse-wrapper.ts';

/**
 * Citta (CittaWeb "nacional", 22 municipalities in RS; briefs/providers-own.md §4): a taxpayer-built NFS-e sent in
 * the `LoteXmlGZipB64` idiom (./lote-gzip.ts) over mutual TLS, synchronous. The payload is a full `NFSe` document
 * wrapping the national DPS (built by the national builder, wrapped by ./nfse-wrapper.ts), signed on `infNFSe`;
 * Citta verifies that signature, assigns the number and key, and answers with its NFS-e.
 *
 * - emit: `POST <base> {"LoteXmlGZipB64": ["<b64(gzip(NFSe))>"]}` → `{DataHoraProcessamento, Lote: [{id,
 *   ChaveAcesso, xmlGZipB64, Erros, Alertas}]}`;
 * - cancel: `POST <base>/eventos {"LoteXmlGZipB64": ["<b64(gzip(evento))>"]}`, answered like the emission with the
 *   registered `evento`;
 * - query: `GET <base>/{nDPS}`; cancellation query: `GET <base>/eventos/{chave}`.
 *
 * Conservative readings of the unknowns, which the sandbox (src/sandbox/lote-gzip/) accepts and nothing else:
 * - the wrapper's identification is provisional but real and XSD-valid (NFSe_v1.01.xsd, which the whole document
 *   satisfies before it is sent): `nNFSe` = `nDFSe` = the DPS number, `Id` = "NFS" + the key made by the national
 *   rule from cLocEmi, ambGer 1 (municipal system), the CNPJ, that number, the AAMM of dhEmi and the DPS number as
 *   the 9-digit code; Citta replaces them. The DPS inside is unsigned (the signature is the wrapper's, as ACBr
 *   signs only infNFSe);
 * - the cancellation is, as ACBr sends it to Citta, a taxpayer-built `evento` wrapping the national pedRegEvento
 *   (unsigned inside), signed on `infEvento`: `Id` = "EVT" + key + 101101 + 001, ambGer 1, nSeqEvento 1, dhProc =
 *   dhEvento, nDFSe = the note's number from its key;
 * - the request key is spelled `LoteXmlGZipB64` (the ADN reception's casing, as ACBr sends it to Citta); answers
 *   are read in any casing;
 * - `GET <base>/{nDPS}` (ACBr reads `status` and `url`) is read for the note in `xmlGZipB64`: a 404 means the DPS was
 *   never processed, an answer without a readable note is transient, never "none". The provider knows the DPS by
 *   its number alone, under the client certificate's CNPJ;
 * - ACBr sends the events query to the national ADN (`ServicosPadraoNacional`); with only Citta's base known, we
 *   ask `GET <base>/eventos/{chave}` in the ADN Município shape (`{LoteDFe: [{TipoEvento, ArquivoXml}]}`).
 */

const declaration: SignedMessage<PrepareInput> = {
  build(input) {
    const dps = nationalFamily.declaration.build(input);
    return buildNfseWrapper(dps, input.project, 'provisional');
  },
  signedElement: 'infNFSe',
  schema: 'NFSe',
  schemaErrorCode: 'NFSE_WRAPPER_SCHEMA_INVALID',
};

/** The taxpayer-built `evento` around the national pedRegEvento (see the readings above); sign `infEvento`. */
const cancellation: CancelMessage = {
  build(input) {
    const pedido = nationalFamily.operations.cancel!.message.build(input);
    const chave = requireKey(input.issued.chave);
    const dhEvento = /<dhEvento>([^<]+)<\/dhEvento>/.exec(pedido.xml)?.[1];
    if (!dhEvento) throw new Error('the cancellation request has no dhEvento');
    const id = `EVT${chave}${CANCELLATION_EVENT_TYPE}001`;
    const xml =
      `<evento xmlns="http://www.sped.fazenda.gov.br/nfse" versao="1.01"><infEvento Id="${id}">` +
      `<verAplic>${escapeXmlText(NATIONAL_APP_VERSION)}</verAplic><ambGer>1</ambGer><nSeqEvento>1</nSeqEvento>` +
      `<dhProc>${dhEvento}</dhProc><nDFSe>${Number(chave.slice(23, 36))}</nDFSe>` +
      `${pedido.xml}</infEvento></evento>`;
    return { id, xml };
  },
  signedElement: 'infEvento',
  schema: 'evento',
  schemaErrorCode: 'EVENT_SCHEMA_INVALID',
};

/** The DPS number of a DPS Id (its last 15 digits), without leading zeros. */
function dpsNumber(id: string): string {
  const match = /^DPS\d{27}(\d{15})$/.exec(id);
  if (!match) throw new Error(`not a DPS Id: ${id}`);
  return match[1]!.replace(/^0+(?=.)/, '');
}

export const cittaFamily = defineFamily({
  id: 'dps-provider',
  provider: 'Citta',
  layout: 'NFSe wrapper over DPS 1.01 (Citta nacional, LoteXmlGZipB64 REST/JSON)',
  transport: 'rest-json',
  auth: 'mtls',
  capabilities: {
    cancel: true,
    substitution: true,
    batch: false,
    mode: 'sync',
    pdf: 'local',
    homologation: true,
    reconcile: true,
  },
  check: checkDpsRequirements,
  declaration,
  operations: {
    emit: {
      request: (document, context) => loteRequest(loteBase(context), 'LoteXmlGZipB64', document.xml),
      parse: (answer, _document, context) => parseLoteIssue(answer, context.ambiente),
    },
    query: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument | null>> {
        const answer = await send({
          method: 'GET',
          url: `${loteBase(context)}/${dpsNumber(document.id)}`,
          headers: ACCEPT_JSON,
        });
        if (answer.kind !== 'response') return transportFailure(answer);
        if (answer.status === 404) return { kind: 'ok', value: null };
        if (answer.status !== 200) return classifyFailure(answer);
        const issued = issuedFromQueryItem(parseJson(answer.body), context.ambiente);
        return issued
          ? { kind: 'ok', value: issued }
          : { kind: 'transient', reason: 'the DPS consultation answered without a readable note' };
      },
    },
    cancel: {
      message: cancellation,
      operation: {
        request: ({ signed }, context): OperationRequest =>
          loteRequest(`${loteBase(context)}/eventos`, 'LoteXmlGZipB64', signed),
        parse: (answer) => parseLoteCancellation(answer),
      },
    },
    queryCancellation: {
      async exchange(issued, context, send) {
        const answer = await send({
          method: 'GET',
          url: `${loteBase(context)}/eventos/${requireKey(issued.chave)}`,
          headers: ACCEPT_JSON,
        });
        return parseEventsAnswer(answer);
      },
    },
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: ['E0840'],
});
