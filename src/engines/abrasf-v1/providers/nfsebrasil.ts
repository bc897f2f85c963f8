import type { NormalizedInvoice } from '../../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../../domain/project-profile.ts';
import { escapeXmlAttr, escapeXmlText } from '../../../xml/escape.ts';
import { childElements, findDescendant, parseXml } from '../../../xml/read.ts';
import { MissingCredentialError } from '../../kit/auth.ts';
import { transportFailure } from '../../kit/engine.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../../kit/family.ts';
import type { HttpAnswer, HttpResponse } from '../../kit/http-client.ts';
import { readSoapAnswer } from '../../kit/soap.ts';
import type { GovernmentError, IssuedDocument, Outcome, PrepareInput } from '../../types.ts';
import { outerXml } from '../../abrasf-v2/transport.ts';
import { checkAbrasfV1 } from '../define.ts';
import { cnaeOf } from '../messages.ts';

/**
 * NFSeBrasil (Memory Informática, `nfsebrasil.net.br/nfse/ws/lote_rps_service.php`, homologation
 * `web1.memory.com.br`; 23 cities of Minas Gerais). Engine key `abrasf-v1:nfsebrasil`. Sources (read for facts, no
 * code taken):
 * - ACBr NFSeBrasil.Provider.pas (frones/ACBr, two versions: 2021 and 2025) and NFSeBrasil.GravarXml.pas: an RPC/encoded
 *   SOAP 1.1 service in `urn:loterpswsdl`, operations `tm_lote_rps_service.importarLoteRPS` (`xml`),
 *   `consultarLoteRPS` (`protocolo`), `consultarRPS` (`numeroRPS`), `consultarNFSE` and `cancelarNFSE`
 *   (`numeroNFSE`), each followed by `codMunicipio`, `cnpjPrestador` and `hashValidador` (the taxpayer's access key,
 *   ACBr `WSChaveAcesso`, lower case), all `xsi:type="xsd:string"`; SOAPAction `urn:loterpswsdl#<operation>`; no
 *   certificate, nothing signed, no ConsultarSituacaoLoteRps. The answer's `return` string holds `RespostaLoteRps`
 *   {status, protocolo, erros/erro, avisos/aviso, notas/nota/xml/CompNfse}; a `return` that is not a RespostaLoteRps
 *   is an error text. Errors carry texts, no codes. Names with `&` travel as `&amp;amp;` (ACBr "Tratamento de nomes
 *   com &").
 * - the provider's rps.xsd (ACBr copy, schemas/abrasf-v1/nfsebrasil/) and a production message of 2025 (Piumhi/MG,
 *   public in a customer's repository): EnviarLoteRpsEnvio written unqualified (the schema's namespace declared as
 *   `xmlns:xs`, unused); LoteRps@codMunicipio, @versao `1`, @Id; InfRps@Id = the RPS number; every Valores element
 *   written, Aliquota a percentage with 2 decimals; no ItemListaServico; CodigoTributacaoMunicipio the LC 116 item.
 *
 * Not a configuration of the generic base (define.ts): the RPS is not ABRASF 1.00's tcRps (no ItemListaServico, no
 * OptanteSimplesNacional, Email/Telefone outside Contato), the call is RPC with the key beside the message, and the
 * answers are not ListaMensagemRetorno; what is shared is reused (the 1.0 layout rules, the CNAE, the transport).
 *
 * Readings chosen for what no public source shows (the sandbox accepts exactly these):
 * - the schema describes the messages in its target namespace while the wire is unqualified: both sides validate the
 *   message with that namespace made its default (`schemaView`);
 * - `status` is not interpreted (ACBr does not either): `notas` → issued; `erros` → refused; neither → pending;
 * - consultarRPS with neither `notas` nor `erros` → "none"; with `erros` → refused (never read as "none": a resend
 *   is only made on an explicit empty answer); the note is matched by its RPS number and series;
 * - a refused lote is checked with consultarRPS before it is believed (a resend after a lost answer is that note);
 * - refusals come back with code `NFSEBRASIL`;
 * - no cancellation: ACBr sends `numeroNFSE` (2025) or `numeroRPS` (2021) and reads no documented answer;
 * - CodigoTributacaoMunicipio: the project's municipal code, else the LC 116 item `14.13` (as the production message);
 *   CodigoCnae written empty when unknown (ACBr NrOcorrCodigoCnae = 1); NumeroLote and LoteRps@Id = the RPS number.
 */
export const NFSEBRASIL_SOAP_NS = 'urn:loterpswsdl';
export const NFSEBRASIL_DATA_NS = 'http://www.nfsebrasil.net.br/nfse/rps/xsd/rps.xsd';
export const NFSEBRASIL_ERROR = 'NFSEBRASIL';

const digits = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');
const cut = (value: string | null | undefined, max: number) => (value ?? '').trim().slice(0, max);
const money = (value: number | null | undefined) => (value ?? 0).toFixed(2);
const el = (name: string, value: string) => `<${name}>${escapeXmlText(value)}</${name}>`;
const opt = (name: string, value: string | null | undefined) => (value ? el(name, value) : '');

function rpsXml(input: PrepareInput): string {
  const { project, invoice } = input;
  const { iss, federal, total, servico: s } = invoice;
  const numero = String(input.number);
  const local = s.localPrestacao.kind === 'municipio' ? s.localPrestacao.codigoMunicipio : project.codigoMunicipio;
  const pis = federal?.pisCofins?.tipoRetencao === 1 ? federal.pisCofins : null;
  const valorIss = iss.aliquota > 0 ? Math.round(total * iss.aliquota) / 100 : 0;
  const [item = '', sub = ''] = s.subitem.split('.');
  const t = invoice.tomador;
  const id = t.id.kind === 'cnpj' ? t.id.cnpj : t.id.kind === 'cpf' ? t.id.cpf : '';
  const a = t.endereco?.nacional ? t.endereco : null;
  const issuedAt = new Date(input.issuedAt.getTime() - 3 * 3600_000).toISOString().slice(0, 19);
  return (
    `<Rps><InfRps Id="${numero}"><IdentificacaoRps>${el('Numero', numero)}${el('Serie', input.serie.trim())}` +
    `<Tipo>1</Tipo></IdentificacaoRps>${el('DataEmissao', issuedAt)}` +
    el('NaturezaOperacao', local === project.codigoMunicipio ? '1' : '2') +
    '<Status>1</Status><Servico><Valores>' +
    el('ValorServicos', money(total)) +
    el('ValorDeducoes', money(0)) +
    el('ValorPis', money(pis?.valorPis)) +
    el('ValorCofins', money(pis?.valorCofins)) +
    el('ValorInss', money(federal?.retencaoCp)) +
    el('ValorIr', money(federal?.retencaoIrrf)) +
    el('ValorCsll', money(federal?.retencaoCsll)) +
    el('IssRetido', iss.retido ? '1' : '2') +
    el('ValorIss', money(valorIss)) +
    el('OutrasRetencoes', money(0)) +
    el('Aliquota', iss.aliquota.toFixed(2)) +
    el('DescontoIncondicionado', money(0)) +
    el('DescontoCondicionado', money(0)) +
    '</Valores>' +
    el('CodigoTributacaoMunicipio', cut(s.codigoTributacaoMunicipal, 20) || `${item}.${sub.padStart(2, '0')}`) +
    el('CodigoCnae', cnaeOf(project, invoice) ?? '') +
    el('Discriminacao', s.descricao.replace(/\s*\r?\n\s*/g, ' ').slice(0, 2000)) +
    el('CodigoMunicipio', local ?? '') +
    `</Servico><Prestador>${el('Cnpj', digits(project.cnpj))}${el('InscricaoMunicipal', digits(project.inscricaoMunicipal))}</Prestador>` +
    `<Tomador><IdentificacaoTomador><CpfCnpj>${id.length === 11 ? el('Cpf', id) : el('Cnpj', digits(id))}</CpfCnpj>` +
    `${opt('InscricaoMunicipal', digits(t.inscricaoMunicipal).slice(0, 15))}</IdentificacaoTomador>` +
    `${el('RazaoSocial', cut(t.nome, 100))}<Endereco>` +
    (a
      ? opt('Endereco', cut(a.logradouro, 100)) +
        opt('Numero', (a.numero ?? '').replace(/[^A-Za-z0-9]/g, '').slice(0, 20)) +
        opt('Complemento', cut(a.complemento, 60)) +
        opt('Bairro', cut(a.bairro, 50)) +
        opt('CodigoMunicipio', a.codigoMunicipio) +
        opt('Uf', a.uf) +
        opt('Cep', digits(a.cep).slice(0, 8))
      : '') +
    `</Endereco>${el('Email', cut(t.email, 255))}${el('Telefone', digits(t.telefone).slice(-11))}</Tomador>` +
    '</InfRps></Rps>'
  );
}

/** The lote (EnviarLoteRpsEnvio) of one RPS, as it travels; the stored declaration. */
function loteXml(input: PrepareInput): string {
  const n = String(input.number);
  return (
    `<EnviarLoteRpsEnvio xmlns:xs="${NFSEBRASIL_DATA_NS}"><LoteRps codMunicipio="${escapeXmlAttr(input.project.codigoMunicipio ?? '')}" ` +
    `versao="1" Id="${n}">${el('NumeroLote', n)}${el('Cnpj', digits(input.project.cnpj))}` +
    `${el('InscricaoMunicipal', digits(input.project.inscricaoMunicipal))}<QuantidadeRps>1</QuantidadeRps>` +
    `<ListaRps>${rpsXml(input)}</ListaRps></LoteRps></EnviarLoteRpsEnvio>`
  );
}

/** The message in the schema's namespace (the wire form leaves it unqualified). */
export const nfseBrasilSchemaView = (xml: string) =>
  xml.replace(/^<EnviarLoteRpsEnvio/, `<EnviarLoteRpsEnvio xmlns="${NFSEBRASIL_DATA_NS}"`);

const factsOf = (xml: string) => ({
  numero: /<NumeroLote>(\d+)</.exec(xml)?.[1] ?? '',
  serie: /<Serie>(\d*)</.exec(xml)?.[1] ?? '',
  cnpj: /<Cnpj>(\d{14})</.exec(xml)?.[1] ?? '',
});

/** One RPC call: the first parameter, then codMunicipio, cnpjPrestador and hashValidador. */
function call(context: SendContext, operation: string, first: [string, string], cnpj: string): OperationRequest {
  const key = context.credentials?.accessToken;
  if (!key) throw new MissingCredentialError('accessToken');
  const param = (name: string, value: string) => `<${name} xsi:type="xsd:string">${escapeXmlText(value)}</${name}>`;
  const method = `tm_lote_rps_service.${operation}`;
  const body =
    '<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" ' +
    `xmlns:urn="${NFSEBRASIL_SOAP_NS}" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
    'xmlns:xsd="http://www.w3.org/2001/XMLSchema"><soapenv:Header/><soapenv:Body>' +
    `<urn:${method} soapenv:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/">` +
    param(first[0], first[1]) +
    param('codMunicipio', context.municipality ?? '') +
    param('cnpjPrestador', cnpj) +
    param('hashValidador', key.toLowerCase()) +
    `</urn:${method}></soapenv:Body></soapenv:Envelope>`;
  return {
    method: 'POST',
    url: context.endpoints.url('emit', context.ambiente, context.municipality),
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: `"${NFSEBRASIL_SOAP_NS}#${method}"` },
    body,
  };
}

type Reply = { kind: 'reply'; errors: GovernmentError[]; notes: Element[]; protocolo: string | null };

function rejected(errors: GovernmentError[]): Outcome<never> {
  const first = errors[0] ?? { Codigo: NFSEBRASIL_ERROR, Descricao: 'recusa sem mensagem' };
  return { kind: 'rejected', errorCode: first.Codigo, errorMessage: first.Descricao, errors };
}

/** The RespostaLoteRps of an answer (or its error text), or how the answer failed. */
function replyOf(answer: HttpResponse): Reply | Outcome<never> {
  const soap = readSoapAnswer(answer.body);
  const clientFault = soap.kind === 'fault' && /(^|:)Client(\.|$)/i.test(soap.code);
  if (!clientFault && (answer.status === 429 || answer.status >= 500)) {
    return { kind: 'transient', reason: `HTTP ${answer.status}`, httpStatus: answer.status };
  }
  if (soap.kind === 'fault') return rejected([{ Codigo: soap.code, Descricao: soap.reason || 'SOAP Fault' }]);
  if (soap.kind === 'unreadable') return { kind: 'unknown', reason: `HTTP ${answer.status}: ${soap.reason}` };
  const text = (soap.result ?? '').replace(/&amp;amp;/g, '&amp;');
  if (!text.includes('RespostaLoteRps')) {
    return {
      kind: 'reply',
      errors: [{ Codigo: NFSEBRASIL_ERROR, Descricao: text || 'resposta vazia' }],
      notes: [],
      protocolo: null,
    };
  }
  const parsed = parseXml(text);
  const root = parsed.ok ? (findDescendant(parsed.root, 'RespostaLoteRps') ?? parsed.root) : null;
  if (!root) return { kind: 'unknown', reason: 'NFSeBrasil: unreadable RespostaLoteRps' };
  const all = (name: string) => Array.from(root.getElementsByTagName(name));
  const errors = all('erro')
    .map((e) => (e.textContent ?? '').trim())
    .filter(Boolean)
    .map((Descricao) => ({ Codigo: NFSEBRASIL_ERROR, Descricao }));
  const notes = all('CompNfse');
  const protocolo =
    childElements(root)
      .find((e) => e.localName === 'protocolo')
      ?.textContent?.trim() || null;
  return { kind: 'reply', errors, notes, protocolo: protocolo && /^\d+$/.test(protocolo) ? protocolo : null };
}

const text = (el: Element | null | undefined, name: string) =>
  (el ? findDescendant(el, name)?.textContent?.trim() : null) || null;

/** Our note among the CompNfse of an answer: the RPS number (and series, when the note carries one). */
function ourNote(notes: Element[], xml: string, ambiente: 1 | 2): IssuedDocument | null {
  const facts = factsOf(xml);
  const comp = notes.find((c) => {
    const rps = findDescendant(c, 'IdentificacaoRps');
    const serie = text(rps, 'Serie');
    return text(rps, 'Numero') === facts.numero && (serie === null || serie === facts.serie);
  });
  const inf = comp ? findDescendant(comp, 'InfNfse') : null;
  const numero = text(inf, 'Numero');
  if (!comp || !inf || !numero) return null;
  const emitted = new Date(text(inf, 'DataEmissao') ?? Date.now());
  return {
    chave: null,
    numero,
    verificationCode: text(inf, 'CodigoVerificacao'),
    emittedAt: Number.isNaN(emitted.getTime()) ? new Date() : emitted,
    xml: outerXml(comp),
    ambiente,
  };
}

async function queryByRps(
  xml: string,
  context: SendContext,
  send: (request: OperationRequest) => Promise<HttpAnswer>,
): Promise<Outcome<IssuedDocument | null>> {
  const facts = factsOf(xml);
  const answer = await send(call(context, 'consultarRPS', ['numeroRPS', facts.numero], facts.cnpj));
  if (answer.kind !== 'response') return transportFailure(answer);
  const reply = replyOf(answer);
  if (reply.kind !== 'reply') return reply;
  const note = ourNote(reply.notes, xml, context.ambiente);
  if (note) return { kind: 'ok', value: note };
  return reply.errors.length > 0 ? rejected(reply.errors) : { kind: 'ok', value: null };
}

function check(project: ProjectFiscalProfile, invoice: NormalizedInvoice) {
  const unmet = checkAbrasfV1(project, invoice);
  if (!/^\d{0,5}$/.test(project.serieNfse.trim())) {
    unmet.push({ field: 'project.serieNfse', message: 'NFSeBrasil: the RPS series is numeric, up to 5 digits' });
  }
  if (project.inscricaoMunicipal && !/^\d{1,15}$/.test(project.inscricaoMunicipal)) {
    unmet.push({ field: 'project.inscricaoMunicipal', message: 'NFSeBrasil: digits only, up to 15' });
  }
  if (invoice.iss.tribISSQN !== 1) {
    unmet.push({
      field: 'valores.tributacaoIss',
      message: 'NFSeBrasil: NaturezaOperacao has no immunity or exemption',
    });
  }
  if (!invoice.tomador.nome?.trim())
    unmet.push({ field: 'tomador.nome', message: 'NFSeBrasil: RazaoSocial is required' });
  return unmet;
}

export const nfseBrasilFamily = defineFamily({
  id: 'abrasf-v1',
  provider: 'NFSeBrasil',
  layout: 'ABRASF 1.00 (NFSeBrasil: own rps.xsd, RPC/encoded SOAP 1.1, access key in the call, asynchronous lotes)',
  transport: 'soap11',
  auth: 'body-credentials',
  capabilities: {
    cancel: false,
    substitution: false,
    batch: false,
    mode: 'async',
    pdf: 'none',
    homologation: true,
    reconcile: true,
  },
  check,
  declaration: {
    build: (input) => ({ id: String(input.number), xml: loteXml(input) }),
    signedElement: null,
    schema: 'abrasf100NFSeBrasil',
    schemaView: nfseBrasilSchemaView,
    schemaErrorCode: 'RPS_SCHEMA_INVALID',
  },
  operations: {
    emit: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument>> {
        const message = document.xml.replace(/&amp;/g, '&amp;amp;');
        const answer = await send(call(context, 'importarLoteRPS', ['xml', message], factsOf(document.xml).cnpj));
        if (answer.kind !== 'response') return transportFailure(answer);
        const reply = replyOf(answer);
        if (reply.kind !== 'reply') return reply;
        if (reply.errors.length > 0 || !reply.protocolo) {
          const held = await queryByRps(document.xml, context, send);
          if (held.kind === 'ok' && held.value) return held as Outcome<IssuedDocument>;
          if (reply.errors.length === 0) return { kind: 'unknown', reason: 'NFSeBrasil accepted without a protocolo' };
          // a refused query holds nothing either; only a failed one leaves the refusal unconfirmed
          return held.kind === 'ok' || held.kind === 'rejected'
            ? rejected(reply.errors)
            : { kind: 'unknown', reason: `NFSeBrasil refused (${reply.errors[0]!.Descricao}); its query failed` };
        }
        return { kind: 'pending', protocol: reply.protocolo };
      },
    },
    poll: {
      async exchange({ protocol, document }, context, send): Promise<Outcome<IssuedDocument>> {
        const answer = await send(
          call(context, 'consultarLoteRPS', ['protocolo', protocol], factsOf(document.xml).cnpj),
        );
        if (answer.kind !== 'response') return transportFailure(answer);
        const reply = replyOf(answer);
        if (reply.kind !== 'reply')
          return reply.kind === 'rejected' ? { kind: 'transient', reason: reply.errorCode } : reply;
        if (reply.errors.length > 0) return rejected(reply.errors);
        if (reply.notes.length === 0) return { kind: 'pending', protocol };
        const note = ourNote(reply.notes, document.xml, context.ambiente);
        return note
          ? { kind: 'ok', value: { ...note, protocol } }
          : { kind: 'unknown', reason: 'lote without our note' };
      },
    },
    query: { exchange: (document, context, send) => queryByRps(document.xml, context, send) },
  },
  alreadyProcessedCodes: [],
  alreadyCancelledCodes: [],
});
