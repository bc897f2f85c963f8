import { childElements, parseXml } from '../../xml/read.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import { readSoapAnswer, type SoapPart, soapEnvelope } from '../kit/soap.ts';
import { checkDpsRequirements } from '../national/dps-builder.ts';
import { nationalFamily } from '../national/family.ts';
import { municipalityRegistry } from '../routing/municipality-registry.ts';
import type { GovernmentError, IssuedDocument, Outcome } from '../types.ts';
import { embeddedNfse, nationalCancellationQuery, nationalQuery } from './raw-xml.ts';

/**
 * Fiorilli "IssWeb Nacional" (ACBr `TACBrNFSeProviderFiorilliAPIPropria101`; 13 cities in the registry, family
 * `dps-provider`, e.g. Assis/SP 3504008): the national DPS 1.01 (national builder and signer, signed on infDPS)
 * inside a SOAP 1.1 call in Fiorilli's namespace `http://www.fiorilli.com.br/nfse-nacional`, SYNCHRONOUS.
 * The brief has no row for Fiorilli: what follows is what ACBr's public sources say (facts only), then the
 * conservative readings we chose where they say nothing. The sandbox (src/sandbox/fiorilli/) accepts only these.
 *
 * Documented by ACBr:
 * - emit (one DPS, "unitário"): SOAPAction `recepcionarDPS`, body `RecepcionarDpsEnvio{DPS}` (the signed national
 *   DPS as the operation's only child, in its own namespace). ACBr also knows `recepcionarLoteDps` /
 *   `recepcionarLoteDpsSincrono` with a `LoteDps` wrapper (NumeroLote, CNPJ, IM, QuantidadeDps, ListaDps) and the
 *   protocol query `consultarLoteDps`; we send one DPS at a time, so neither is used.
 * - the answer (101 profile): `ListaMensagens/mensagem{Codigo, Mensagem, Correcao, IdDPS}` — a code containing
 *   `L000` is an alert, any other an error — then `DataRecebimento`, `protocolo`/`Protocolo`, `Status` and the
 *   national `NFSe` (infNFSe Id, nNFSe, dhProc, DPS) as children of the answer element.
 * - cancellation is NOT sent to Sefin Nacional (ACBr: "Confirmado que o envio de evento não deve ser feito pelo
 *   padrão nacional"): the national pedRegEvento (e101101, signed on infPedReg) as
 *   `{"pedidoRegistroEventoXmlGZipB64"}` JSON, `POST <city URL>/nfse/{chave}/eventos`, read as Sefin's answer.
 * - ConsultarNFSeRps, ConsultarNFSePorChave and ConsultarEvento of these cities go to Sefin Nacional (ACBr
 *   `ServicosPadraoNacional`): the reconciliation (GET /dps/{id} → GET /nfse/{chave}) and the cancellation query
 *   (GET /nfse/{chave}/eventos/101101/1) are the national family's, with the certificate only
 *   (`nationalOperations`). This is what guarantees "never issue twice" after an unknown outcome.
 * - the API Própria messages carry no user/password (unlike Fiorilli's ABRASF 2.00 service, whose body ends with
 *   `<username>/<password>`): the auth is the A1 certificate on TLS. The registry still asks the project for
 *   municipalUser/municipalPassword (basicAuthUsuario/basicAuthSenha) at the API edge; they are not sent.
 *
 * Conservative readings (not documented):
 * - the answer element's name is not documented: we read the first element of the SOAP Body, whatever its name,
 *   and its descendants `mensagem`/`Mensagem` (either case, as the 1.00 and 1.01 profiles differ);
 * - success is: no error message AND a national NFS-e (`<NFSe xmlns="http://www.sped.fazenda.gov.br/nfse">` with
 *   key and number) in the answer. No errors and no NFS-e, or errors together with an NFS-e, is `unknown` (it is
 *   reconciled with Sefin before anything is sent again); errors without an NFS-e are a refusal;
 * - a resent DPS is refused with the national E0014 ("DPS já processada") → `unknown`, reconciled;
 * - a SOAP Fault with HTTP 500 from the server, 429 and 5xx are transient; a `Client` fault is a refusal;
 * - the signature is inclusive C14N (ACBr forces exclusive only in the 1.00 profile);
 * - the cities ACBr configures with layout **1.00** (Ji-Paraná, Formosa da Serra Negra, Pedreira, Ponta Porã) are
 *   refused at the API edge (field `project.codigoMunicipio`): we build only the DPS 1.01 and sending it where
 *   ACBr sends 1.00 (with exclusive C14N) would be a guess;
 * - the cancellation is sent to the same city URL as the emission (the registry has no separate event URL; ACBr
 *   falls back to it), and is read exactly as Sefin's (201 with `eventoXmlGZipB64`; E0840 → asked again).
 */
export const FIORILLI_NAMESPACE = 'http://www.fiorilli.com.br/nfse-nacional';
export const FIORILLI_EMIT_ACTION = 'recepcionarDPS';
const SUPPORTED_VERSION = '1.01';

function emitRequest(document: { xml: string }, context: SendContext): OperationRequest {
  const dps: SoapPart = { name: 'DPS', value: document.xml, encoding: 'xml', qualified: false, bare: true };
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: FIORILLI_NAMESPACE,
    operation: 'RecepcionarDpsEnvio',
    parts: [dps],
    soapAction: FIORILLI_EMIT_ACTION,
  });
  return { method: 'POST', url: context.endpoints.url('emit', context.ambiente, context.municipality), headers, body };
}

/** Every `mensagem`/`Mensagem` item (with a code) below the answer element. */
function messagesOf(root: Element): GovernmentError[] {
  const out: GovernmentError[] = [];
  const visit = (el: Element) => {
    const fields = childElements(el);
    const value = (name: string) => fields.find((f) => f.localName.toLowerCase() === name)?.textContent?.trim() || null;
    if (el.localName.toLowerCase() === 'mensagem' && value('codigo')) {
      const correcao = [value('correcao'), value('iddps')].filter(Boolean).join(' ');
      out.push({
        Codigo: value('codigo')!,
        Descricao: value('mensagem') ?? value('descricao') ?? 'Erro não detalhado pelo provedor',
        Complemento: correcao || null,
      });
      return;
    }
    for (const f of fields) visit(f);
  };
  visit(root);
  return out;
}

const isAlert = (error: GovernmentError) => error.Codigo.includes('L000');

function parseEmit(answer: HttpResponse, ambiente: 1 | 2): Outcome<IssuedDocument> {
  const soap = readSoapAnswer(answer.body);
  const clientFault = soap.kind === 'fault' && /(^|:)Client(\.|$)/i.test(soap.code);
  if (!clientFault && (answer.status === 429 || answer.status >= 500)) {
    const detail = soap.kind === 'fault' ? ` ${soap.code} ${soap.reason}` : '';
    return { kind: 'transient', reason: `HTTP ${answer.status}${detail}`, httpStatus: answer.status };
  }
  if (soap.kind === 'fault') {
    const reason = soap.reason || 'SOAP Fault';
    return {
      kind: 'rejected',
      errorCode: soap.code,
      errorMessage: reason,
      errors: [{ Codigo: soap.code, Descricao: reason }],
      httpStatus: answer.status,
    };
  }
  if (soap.kind === 'unreadable') return { kind: 'unknown', reason: `HTTP ${answer.status}: ${soap.reason}` };
  const parsed = parseXml(answer.body);
  const body = parsed.ok ? childElements(parsed.root).find((e) => e.localName === 'Body') : undefined;
  const root = body ? childElements(body)[0] : undefined;
  if (!root) return { kind: 'unknown', reason: `HTTP ${answer.status}: an empty Fiorilli answer` };
  const errors = messagesOf(root).filter((e) => !isAlert(e));
  const issued = embeddedNfse(answer.body, ambiente);
  if (issued && errors.length === 0) return { kind: 'ok', value: issued };
  if (issued) return { kind: 'unknown', reason: `Fiorilli answered an NFS-e and errors (${errors[0]!.Codigo})` };
  if (errors.length > 0) {
    return {
      kind: 'rejected',
      errorCode: errors[0]!.Codigo,
      errorMessage: errors[0]!.Descricao,
      errors,
      httpStatus: answer.status,
    };
  }
  return { kind: 'unknown', reason: `Fiorilli answered ${root.localName} without errors and without an NFS-e` };
}

/** The DPS layout version ACBr configures for a Fiorilli city (null when the city is not a Fiorilli DPS city). */
function layoutVersionOf(codigoMunicipio: string | null): string | null {
  if (!codigoMunicipio) return null;
  const route = municipalityRegistry().find(codigoMunicipio);
  return route?.provider === 'Fiorilli' && route.family === 'dps-provider' ? route.version : null;
}

const nationalCancel = nationalFamily.operations.cancel!;

export const fiorilliDefinition = defineFamily({
  id: 'dps-provider',
  provider: 'Fiorilli',
  // the layout-1.00 cities are not written by this engine (routing reports them as not implemented)
  serves: (municipality) => (layoutVersionOf(municipality) ?? SUPPORTED_VERSION) === SUPPORTED_VERSION,
  layout: 'DPS 1.01 in Fiorilli RecepcionarDpsEnvio (SOAP 1.1, synchronous)',
  transport: 'soap11',
  auth: 'mtls',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'local',
    homologation: true,
    reconcile: true,
  },
  nationalOperations: ['query', 'queryCancellation'],
  check(project, invoice) {
    const unmet = checkDpsRequirements(project, invoice);
    const version = layoutVersionOf(project.codigoMunicipio);
    if (version !== null && version !== SUPPORTED_VERSION) {
      unmet.push({
        field: 'project.codigoMunicipio',
        message: `Fiorilli takes DPS layout ${version} in this city; only layout ${SUPPORTED_VERSION} is supported`,
      });
    }
    return unmet;
  },
  declaration: nationalFamily.declaration,
  operations: {
    emit: {
      request: emitRequest,
      parse: (answer, _document, context) => parseEmit(answer, context.ambiente),
    },
    query: nationalQuery,
    cancel: nationalCancel,
    queryCancellation: nationalCancellationQuery(),
  },
  alreadyProcessedCodes: ['E0014'],
  alreadyCancelledCodes: ['E0840'],
});
