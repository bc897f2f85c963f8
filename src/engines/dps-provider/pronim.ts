import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type OperationRequest } from '../kit/family.ts';
import { nationalFamily } from '../national/family.ts';
import { checkDpsRequirements } from '../national/dps-builder.ts';
import type { IssuedDocument, Outcome } from '../types.ts';
import {
  ACCEPT_JSON,
  issuedFromQueryItem,
  loteBase,
  loteRequest,
  parseEventsAnswer,
  parseJson,
  parseLoteCancellation,
  parseLoteIssue,
  pick,
  requireKey,
} from './lote-gzip.ts';
import { classifyFailure } from '../national/responses.ts';

/**
 * Pronim (Cidade360 "NotaNacional", 159 municipalities; briefs/providers-own.md §4): the national DPS 1.01, signed on
 * infDPS by the national builder and signer, sent in the `LoteXmlGZipB64` idiom (./lote-gzip.ts) over mutual TLS,
 * synchronous.
 *
 * - emit: `POST <base>/EnviarSincrono {"loteXmlGZipB64": ["<b64(gzip(DPS))>"]}` → `{dataHoraProcessamento,
 *   lote: [{id, chaveAcesso, xmlGZipB64, erros, alertas}]}`;
 * - cancel: the national pedRegEvento (e101101, signed on infPedReg) to the same `EnviarSincrono`, answered with the
 *   registered `evento` in `lote[0].xmlGZipB64`;
 * - query: `GET <base>/ConsultarDPS/{cnpj}/{serie}/{nDPS}` → `{total, notas: [{chave, situacao, xmlGZipB64}]}`;
 * - cancellation query: `GET <base>/ConsultarEventos/{chave}`.
 *
 * Conservative readings of the unknowns (§4.1 items 1 and 2), which the sandbox (src/sandbox/lote-gzip/) accepts
 * and nothing else:
 * - the request key is spelled `loteXmlGZipB64` (lower camel case, as ACBr sends it); the answer is read in any
 *   casing; errors are `{Codigo|codigo, Descricao|descricao, Complemento}`, per lote item or at the top level;
 * - the events answer has no documented shape: we read the ADN Município shape (`GET /NFSe/{chave}/Eventos`:
 *   `{loteDFe: [{tipoEvento, arquivoXml}]}`, `arquivoXml` gzip+base64), and a 404 or an empty list means none;
 * - `ConsultarDPS` takes the series and number without leading zeros; an empty `notas` (or a 404) means the DPS
 *   was never processed; a consultation that names a note we cannot read is transient, never "none";
 * - the national alreadyProcessed (E0014) and alreadyCancelled (E0840) codes, since the provider forwards the
 *   national rules (it is a lote-reception clone of the ADN).
 */

/** Series and number of a DPS Id (`DPS` + cMun 7 + tpInsc 1 + inscrição 14 + série 5 + nDPS 15). */
function dpsIdParts(id: string): { inscricao: string; serie: string; nDPS: string } {
  const match = /^DPS\d{7}[12](\d{14})(\d{5})(\d{15})$/.exec(id);
  if (!match) throw new Error(`not a DPS Id: ${id}`);
  const strip = (value: string) => value.replace(/^0+(?=.)/, '');
  const [, inscricao, serie, nDPS] = match;
  return { inscricao: inscricao!.replace(/^000(?=\d{11}$)/, ''), serie: strip(serie!), nDPS: strip(nDPS!) };
}

export const pronimFamily = defineFamily({
  id: 'dps-provider',
  provider: 'Pronim',
  layout: 'DPS 1.01 (Pronim NotaNacional, LoteXmlGZipB64 REST/JSON)',
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
  declaration: nationalFamily.declaration,
  operations: {
    emit: {
      request: (document, context) =>
        loteRequest(`${loteBase(context)}/EnviarSincrono`, 'loteXmlGZipB64', document.xml),
      parse: (answer, _document, context) => parseLoteIssue(answer, context.ambiente),
    },
    query: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument | null>> {
        const { inscricao, serie, nDPS } = dpsIdParts(document.id);
        const answer = await send({
          method: 'GET',
          url: `${loteBase(context)}/ConsultarDPS/${inscricao}/${serie}/${nDPS}`,
          headers: ACCEPT_JSON,
        });
        if (answer.kind !== 'response') return transportFailure(answer);
        if (answer.status === 404) return { kind: 'ok', value: null };
        if (answer.status !== 200) return classifyFailure(answer);
        const body = parseJson(answer.body);
        const notas = pick(body, 'notas');
        if (!Array.isArray(notas)) return { kind: 'transient', reason: 'ConsultarDPS answered without notas' };
        if (notas.length === 0) return { kind: 'ok', value: null };
        const issued = issuedFromQueryItem(notas[0], context.ambiente);
        return issued
          ? { kind: 'ok', value: issued }
          : { kind: 'transient', reason: 'ConsultarDPS answered a note that cannot be read' };
      },
    },
    cancel: {
      message: nationalFamily.operations.cancel!.message,
      operation: {
        request: ({ signed }, context): OperationRequest =>
          loteRequest(`${loteBase(context)}/EnviarSincrono`, 'loteXmlGZipB64', signed),
        parse: (answer) => parseLoteCancellation(answer),
      },
    },
    queryCancellation: {
      async exchange(issued, context, send) {
        const answer = await send({
          method: 'GET',
          url: `${loteBase(context)}/ConsultarEventos/${requireKey(issued.chave)}`,
          headers: ACCEPT_JSON,
        });
        return parseEventsAnswer(answer);
      },
    },
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: ['E0840'],
});
