import { MissingCredentialError } from '../kit/auth.ts';
import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpAnswer } from '../kit/http-client.ts';
import { type SoapPart, soapEnvelope } from '../kit/soap.ts';
import { municipalityRegistry } from '../routing/municipality-registry.ts';
import type { CancellationRecord, IssuedDocument, Outcome } from '../types.ts';
import {
  EL_SERVICE_NAMESPACE,
  field,
  issuedOf,
  loteXml,
  naturezaOperacao,
  notesOf,
  readReturn,
  rejected,
  rpsNumberOf,
  takerAddress,
} from './el-layout.ts';

/**
 * E&L Produções, legacy own layout (`RpsServiceService`, ACBr provider EL at layout 1.00): engine key
 * `own-layout:el`. EL's ABRASF 2.04 cities are the `abrasf-v2:el` engine.
 *
 * Sources (facts only, no code copied):
 * - the service's WSDL and the `LoteRps` schema (shared/reference/providers/el/, from akretion/nfselib; the schema is
 *   shipped as schemas/el/el-nfse-legacy.xsd and every lote is validated against it before it is sent);
 * - ACBr `Provedores/EL.Provider.pas` (TACBrNFSeProviderEL) and `EL.GravarXml.pas` (TNFSeW_EL), edsontmarques/ACBr;
 * - two independent clients of the same service: a PHP `NFs\EL\WebService` and a TypeScript `NFSeELService`
 *   (found by `find_string autenticarContribuinte`), which agree with ACBr on the session and the messages.
 *
 * The protocol: SOAP 1.1 document/literal, SOAPAction "", operation elements in the namespace
 * `http://des36.el.com.br:8080/el-issonline/` with unqualified children, answers `<ns2:<Op>Response><return>`.
 *   autenticarContribuinte(identificacaoPrestador = CNPJ, senha)            → return = session hash
 *   EnviarLoteRpsEnvio(identificacaoPrestador, hashIdentificador, arquivo)   → return/numeroProtocolo (asynchronous)
 *   finalizarSessao(hashIdentificador)
 *   ConsultarSituacaoLoteRpsEnvio(identificacaoPrestador, numeroProtocolo)   → return/situacaoLoteRps 1–4
 *   ConsultarLoteRpsEnvio(identificacaoPrestador, numeroProtocolo)           → return/notasFiscais
 *   ConsultarNfseRpsEnvio(identificacaoRps = RPS number, identificacaoPrestador) → return/nfeRpsNotaFiscal
 *   CancelarNfseMotivoEnvio(identificacaoPrestador, senha, numeroNfse, motivoCancelamento)
 *   errors: return/mensagens `CÓDIGO - descrição - correção` (ACBr ProcessarMensagemErros).
 *
 * Readings where the sources are silent (the sandbox, src/sandbox/own-layout/el.ts, accepts only these):
 * - no client certificate and no XML signature (ACBr: UseCertificateHTTP False, nothing in ConfigAssinar); the
 *   credential is the web-service password (ACBr `WSSenha`), the project's `municipalPassword`: a project without
 *   it is refused with ENGINE_CREDENTIALS_MISSING when the job sends (the registry's EL traits, shared with the
 *   ABRASF 2.04 cities, list only the certificate);
 * - one RPS per lote, NumeroLote = RPS number; a session per emission, closed after the lote is sent (best effort);
 * - cancellation by `CancelarNfseMotivoEnvio` (both independent clients; ACBr's `CancelarNfseEnvio` has no
 *   credential at all); there is no cancellation query (the `situacao` values of a note are not documented);
 * - a note's `idNota` is its authenticity key (the city portal's `autenticacaoNota.jsf?chave=`): the verification
 *   code;
 * - an RPS query whose `return` lists no note is "none"; the refusal codes are not published: "already processed"
 *   (E10, RPS already received) and "already cancelled" (E79) are the sandbox's codes, E10 being the ABRASF code
 *   the service's 2.04 sibling uses;
 * - only the 24 cities whose registry URL is the `RpsServiceService` are served; the six own-layout EL cities whose
 *   URL is an ABRASF `NfseWSService` are reported as not implemented (the layout and the URL disagree);
 * - only taxable and immune services (NaturezaOperacao 1/2/4); the taker must have CPF/CNPJ, a national address and
 *   an e-mail, and the provider an inscrição municipal and an e-mail (required by the schema).
 */

export const EL_ALREADY_PROCESSED = 'E10';
export const EL_ALREADY_CANCELLED = 'E79';

const soapAction = '';

function call(context: SendContext, operation: string, parts: SoapPart[]): OperationRequest {
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: EL_SERVICE_NAMESPACE,
    operation,
    parts,
    soapAction,
  });
  return { method: 'POST', url: context.endpoints.url('emit', context.ambiente, context.municipality), headers, body };
}

const text = (name: string, value: string): SoapPart => ({ name, value, encoding: 'escaped', qualified: false });

function password(context: SendContext): string {
  const senha = context.credentials?.municipalPassword;
  if (!senha) throw new MissingCredentialError('municipalPassword');
  return senha;
}

/** The provider's CNPJ and the RPS number of a prepared lote. */
function loteKeys(xml: string): { cnpj: string; rps: string } {
  return { cnpj: field(xml, 'CpfCnpj') ?? '', rps: field(xml, 'Numero') ?? '' };
}

function servesMunicipality(code: string): boolean {
  const route = municipalityRegistry().find(code);
  const url = route?.parameters?.endpoints.production.Recepcionar ?? '';
  return route?.family === 'own-layout' && /RpsService/i.test(url);
}

/** The notes of a lote (or an RPS query) answer, as the note of this RPS: null when absent. */
async function noteOfLote(
  context: SendContext,
  send: (request: OperationRequest) => Promise<HttpAnswer>,
  keys: { cnpj: string; rps: string },
  protocol: string,
): Promise<Outcome<IssuedDocument | null>> {
  const answer = await send(
    call(context, 'ConsultarLoteRpsEnvio', [
      text('identificacaoPrestador', keys.cnpj),
      text('numeroProtocolo', protocol),
    ]),
  );
  if (answer.kind !== 'response') return transportFailure(answer);
  const read = readReturn(answer);
  if (read.kind === 'failure') return read.outcome;
  if (read.errors.length > 0) return rejected(read.errors);
  const note = read.element ? notesOf(read.element).find((n) => rpsNumberOf(n) === keys.rps) : undefined;
  return { kind: 'ok', value: note ? issuedOf(note, answer.body, context.ambiente, protocol) : null };
}

export const elLegacyDefinition = defineFamily({
  id: 'own-layout',
  provider: 'EL',
  serves: servesMunicipality,
  layout: 'E&L legacy own layout (RpsServiceService, session + asynchronous lote)',
  transport: 'soap11',
  auth: 'body-credentials',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'async',
    pdf: 'none',
    homologation: false,
    reconcile: true,
  },
  check(project, invoice) {
    const unmet: { field: string; message: string }[] = [];
    if (!project.inscricaoMunicipal) {
      unmet.push({
        field: 'project.inscricaoMunicipal',
        message: 'EL: the provider is identified by its inscrição municipal',
      });
    }
    if (!project.email)
      unmet.push({ field: 'project.email', message: 'EL layout: the provider contact e-mail is required' });
    if (naturezaOperacao(project, invoice) === null) {
      unmet.push({
        field: 'valores.tributacaoIss',
        message: 'EL legacy layout: only taxable or immune services have a NaturezaOperacao',
      });
    }
    const taker = invoice.tomador;
    if (taker.estrangeiro || (taker.id.kind !== 'cnpj' && taker.id.kind !== 'cpf')) {
      unmet.push({ field: 'tomador', message: 'EL legacy layout: the taker needs a CPF or CNPJ' });
    }
    if (!taker.email) unmet.push({ field: 'tomador.email', message: 'EL layout: the taker e-mail is required' });
    if (!takerAddress(taker.endereco)) {
      unmet.push({ field: 'tomador.endereco', message: 'EL layout: the taker needs a national address (city and UF)' });
    }
    if (invoice.servico.localPrestacao.kind !== 'municipio') {
      unmet.push({ field: 'servico.localPrestacao', message: 'EL legacy layout: services abroad are not supported' });
    }
    return unmet;
  },
  declaration: {
    build(input) {
      return { id: `${input.project.cnpj}-${input.serie}-${input.number}`, xml: loteXml(input) };
    },
    signedElement: null,
    schema: 'elLegacy',
    schemaErrorCode: 'EL_LAYOUT',
  },
  operations: {
    emit: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument>> {
        const keys = loteKeys(document.xml);
        const login = await send(
          call(context, 'autenticarContribuinte', [
            text('identificacaoPrestador', keys.cnpj),
            text('senha', password(context)),
          ]),
        );
        if (login.kind !== 'response') return transportFailure(login);
        const session = readReturn(login);
        if (session.kind === 'failure') return session.outcome;
        if (session.errors.length > 0) return rejected(session.errors);
        if (!session.text) return rejected([{ Codigo: 'EL_SESSION', Descricao: 'autenticarContribuinte sem hash' }]);
        const sent = await send(
          call(context, 'EnviarLoteRpsEnvio', [
            text('identificacaoPrestador', keys.cnpj),
            text('hashIdentificador', session.text),
            { name: 'arquivo', value: document.xml, encoding: 'cdata', qualified: false },
          ]),
        );
        if (sent.kind !== 'response') return transportFailure(sent);
        // the session ends whatever the lote's fate; its answer changes nothing
        await send(call(context, 'finalizarSessao', [text('hashIdentificador', session.text)]));
        const read = readReturn(sent);
        if (read.kind === 'failure') return read.outcome;
        if (read.errors.length > 0) return rejected(read.errors);
        const protocol = read.element ? field(sent.body, 'numeroProtocolo') : null;
        return protocol
          ? { kind: 'pending', protocol }
          : { kind: 'unknown', reason: 'EL answered the lote without numeroProtocolo' };
      },
    },
    poll: {
      async exchange({ protocol, document }, context, send): Promise<Outcome<IssuedDocument>> {
        const keys = loteKeys(document.xml);
        const answer = await send(
          call(context, 'ConsultarSituacaoLoteRpsEnvio', [
            text('identificacaoPrestador', keys.cnpj),
            text('numeroProtocolo', protocol),
          ]),
        );
        if (answer.kind !== 'response') return transportFailure(answer);
        const read = readReturn(answer);
        if (read.kind === 'failure') return read.outcome;
        if (read.errors.length > 0) return rejected(read.errors);
        const situacao = field(answer.body, 'situacaoLoteRps');
        if (situacao === '1') return { kind: 'pending', protocol };
        if (situacao === '2') {
          const lote = await noteOfLote(context, send, keys, protocol);
          if (lote.kind !== 'ok') return lote;
          return rejected([{ Codigo: 'EL_LOTE', Descricao: `lote ${protocol} processado com erro` }]);
        }
        if (situacao !== '3' && situacao !== '4') {
          return { kind: 'transient', reason: `EL lote ${protocol} in situação ${situacao ?? '(none)'}` };
        }
        const lote = await noteOfLote(context, send, keys, protocol);
        if (lote.kind !== 'ok') return lote;
        return lote.value
          ? { kind: 'ok', value: lote.value }
          : { kind: 'unknown', reason: `EL lote ${protocol} processed without the note of RPS ${keys.rps}` };
      },
    },
    query: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument | null>> {
        const keys = loteKeys(document.xml);
        const answer = await send(
          call(context, 'ConsultarNfseRpsEnvio', [
            text('identificacaoRps', keys.rps),
            text('identificacaoPrestador', keys.cnpj),
          ]),
        );
        if (answer.kind !== 'response') return transportFailure(answer);
        const read = readReturn(answer);
        if (read.kind === 'failure') return read.outcome;
        if (read.errors.length > 0) return rejected(read.errors);
        const note = read.element ? notesOf(read.element).find((n) => rpsNumberOf(n) === keys.rps) : undefined;
        return { kind: 'ok', value: note ? issuedOf(note, answer.body, context.ambiente, null) : null };
      },
    },
    cancel: {
      message: {
        build({ issued, reason }) {
          const motivo = (reason ?? 'Cancelamento solicitado pelo prestador').slice(0, 255);
          const xml =
            `<CancelarNfseMotivoEnvio><identificacaoPrestador>${issued.providerCnpj}</identificacaoPrestador>` +
            `<numeroNfse>${issued.numero ?? ''}</numeroNfse>` +
            `<motivoCancelamento>${motivo.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</motivoCancelamento>` +
            '</CancelarNfseMotivoEnvio>';
          return { id: `cancel-${issued.numero}`, xml };
        },
        signedElement: null,
        schema: null,
        schemaErrorCode: 'EL_LAYOUT',
      },
      operation: {
        request: ({ signed }, context) =>
          call(context, 'CancelarNfseMotivoEnvio', [
            text('identificacaoPrestador', field(signed, 'identificacaoPrestador') ?? ''),
            text('senha', password(context)),
            text('numeroNfse', field(signed, 'numeroNfse') ?? ''),
            text('motivoCancelamento', field(signed, 'motivoCancelamento') ?? ''),
          ]),
        parse(answer): Outcome<CancellationRecord> {
          const read = readReturn(answer);
          if (read.kind === 'failure') return read.outcome;
          if (read.errors.length > 0) return rejected(read.errors);
          if (!read.element) return { kind: 'unknown', reason: 'EL cancellation answer without return' };
          return { kind: 'ok', value: { cancelledAt: new Date(), xml: answer.body } };
        },
      },
    },
  },
  alreadyProcessedCodes: [EL_ALREADY_PROCESSED],
  alreadyCancelledCodes: [EL_ALREADY_CANCELLED],
});
