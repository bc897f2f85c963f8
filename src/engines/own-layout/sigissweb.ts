import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import { findMunicipality } from '../../domain/municipalities.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import { childElements, outerXml, parseXml, text } from '../../xml/read.ts';
import { MissingCredentialError } from '../kit/auth.ts';
import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpAnswer, HttpResponse } from '../kit/http-client.ts';
import type { GovernmentError, IssuedDocument, Outcome } from '../types.ts';

/**
 * SigISSWeb (SigISS Web, `https://ws<city>.sigissweb.com/rest/…`): engine key `own-layout:sigissweb` (11 cities in
 * SP and RJ: Sumaré, Santa Bárbara d'Oeste, Araras, Valinhos, Leme, …). Own flat XML `<notafiscal>` over REST.
 *
 * Sources (facts only, no code copied; each fact is in at least two of them unless said otherwise):
 * - ACBr `Provedores/SigISSWeb.Provider.pas` and `SigISSWeb.GravarXml.pas` (ProjetoACBr/ACBr @3c55b66e);
 * - OpenAC.Net.NFSe `Providers/SigissWeb/ProviderSigISSWeb.cs`, `SigISSWeb102ServiceClient.cs` (@0cdf82aa);
 * - UniNFe `NFe.Components.SIGISSWEB` (Unimake/Uninfe); a sample client published by the vendor (`WsClientSigissweb`,
 *   login `{login, senha}` then `POST /rest/nfes`); independent production clients (PHP `SigissWebService` for Santa
 *   Bárbara d'Oeste, VBA for Sumaré, Python, Java) found by `find_string sigissweb.com/rest` and `nfes/pegaxml/`.
 *
 *   POST rest/login  {"login": <CNPJ digits>, "senha": <web-service password>} → the token as plain text
 *                    (ACBr: a text containing `Bearer`), sent verbatim as `Authorization` on every other call
 *   POST rest/nfes   <?xml … encoding="ISO-8859-1"?><notafiscal>{flat elements, order below}</notafiscal>
 *                    → <notafiscal>{codigo, numero_nf, serie, rps, serie_rps, data_emissao dd/mm/aaaa, …}</notafiscal>
 *   GET  rest/nfes/pegaxml/{rps}/serierps/{serie_rps} → the same <notafiscal> of the RPS (OpenAC, UniNFe-era VBA,
 *                    PHP, Python: the reconciliation by RPS)
 *   errors: `erros/erro{codigo, descricao}` (or the root's own `erro` children; `descricao` "Operação concluída com
 *   sucesso" is no error), or a plain text (ACBr wraps a non-XML answer as an error without code); a resend of an
 *   RPS already turned into a note is refused with "… ja foi importado anteriormente" (the PHP client's test).
 *
 * Readings where the sources are silent (the sandbox, src/sandbox/own-layout/sigissweb.ts, accepts only these):
 * - the registry's URL is the city host (`https://wsleme.sigissweb.com/`); every call goes below its `rest/` (ACBr);
 * - the login is the project's `municipalUser` (ACBr `WSUser`, digits only; the vendor's sample: the provider's
 *   CNPJ) and the password its `municipalPassword` (the password the city issues for the web service); a new token
 *   per operation (no lifetime is published);
 * - the body is declared ISO-8859-1 (ACBr, the vendor's sample) and written ASCII-only: every other character as a
 *   numeric reference, so the bytes read the same in ISO-8859-1 and UTF-8; `Content-Type: application/xml` (the
 *   vendor's sample, OpenAC, PHP; ACBr `text/xml`);
 * - `valor_nf` and `valor_servico` are both the gross value (the PHP production client, with retentions; ACBr and
 *   OpenAC each send the net value in one of them); amounts with a decimal comma and two decimals; `aliq_*` in percent;
 * - the taker's IE and, when it has none, its IM are written `isento` (the vendor's sample); cities by name (the
 *   vendor's sample, PHP); `codigo_nbs` in the dotted NBS notation (PHP `1.2001.50.00`), empty when unknown;
 * - the RPS query answers a missing RPS with HTTP 404 or an error whose text says "não encontrad…": "none"; any
 *   other refusal of a query is retried, never believed; an emission refusal is checked by the RPS query before it
 *   is believed (the error codes are not published); "already processed" is the text above, kept as
 *   `SIGISSWEB_RPS_IMPORTADO`;
 * - no web-service cancellation: the call (`GET rest/nfes/cancela/{numero_nf}/serie/{serie}/motivo/{motivo}`, ACBr,
 *   OpenAC, UniNFe) needs the note's own series, which the platform does not keep, and its answer is not documented
 *   (ACBr: "Precisamos de um retorno sem erros para terminar a implementação"); cancel at the city portal;
 * - services abroad and foreign takers are refused (the `exterior_*` variants are not described).
 */

export const SIGISSWEB_ALREADY_IMPORTED = 'SIGISSWEB_RPS_IMPORTADO';

const round2 = (value: number) => Math.round(value * 100) / 100;
const money = (value: number) => round2(value).toFixed(2).replace('.', ',');

/** Text of an element, ASCII-only: `&`, `<`, `>` escaped, every other non-ASCII character a numeric reference. */
function asciiText(value: string): string {
  return escapeXmlText(value).replace(/[^\x20-\x7e\t\n]/g, (c) => `&#${c.codePointAt(0)};`);
}

/** The REST base of the city: the registry's host URL with `rest/`. */
function rest(context: SendContext, path: string): string {
  const base = context.endpoints.url('emit', context.ambiente, context.municipality).replace(/\/+$/, '');
  return `${base.replace(/\/rest$/, '')}/rest/${path}`;
}

/** dd/mm/aaaa in Brasília. */
function dateBrasilia(at: Date): string {
  const iso = new Date(at.getTime() - 3 * 3600_000).toISOString();
  return `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;
}

/** NBS in its dotted notation (9 digits → `1.2001.50.00`), as the PHP client sends it. */
function dottedNbs(nbs: string | null | undefined): string {
  const digits = (nbs ?? '').replace(/\D/g, '');
  if (digits.length !== 9) return '';
  return `${digits.slice(0, 1)}.${digits.slice(1, 5)}.${digits.slice(5, 7)}.${digits.slice(7, 9)}`;
}

interface Federal {
  base: number;
  aliquota: number;
  valor: number;
}

function federal(total: number, valor: number | null | undefined, aliquota?: number | null): Federal {
  const v = round2(valor ?? 0);
  if (v <= 0) return { base: 0, aliquota: 0, valor: 0 };
  return { base: total, aliquota: round2(aliquota ?? (v / total) * 100), valor: v };
}

export function notaFiscalXml(input: {
  project: ProjectFiscalProfile;
  invoice: NormalizedInvoice;
  serie: string;
  number: number;
  issuedAt: Date;
}): string {
  const { project, invoice } = input;
  const t = invoice.tomador;
  const s = invoice.servico;
  const doc = t.id.kind === 'cnpj' ? t.id.cnpj : t.id.kind === 'cpf' ? t.id.cpf : '';
  const takerCity = t.endereco?.codigoMunicipio ? findMunicipality(t.endereco.codigoMunicipio) : undefined;
  const place = findMunicipality(
    s.localPrestacao.kind === 'municipio' ? s.localPrestacao.codigoMunicipio : (project.codigoMunicipio ?? ''),
  );
  const taxable = invoice.iss.tribISSQN === 1;
  const aliquota = taxable ? invoice.iss.aliquota : 0;
  const iss = taxable ? round2((invoice.total * aliquota) / 100) : 0;
  const pc = invoice.federal?.pisCofins ?? null;
  const pis = federal(invoice.total, pc?.valorPis, pc?.aliquotaPis);
  const cofins = federal(invoice.total, pc?.valorCofins, pc?.aliquotaCofins);
  const csll = federal(invoice.total, invoice.federal?.retencaoCsll);
  const irrf = federal(invoice.total, invoice.federal?.retencaoIrrf);
  const inss = federal(invoice.total, invoice.federal?.retencaoCp);
  const fields: [string, string][] = [
    ['cnpj_cpf_prestador', project.cnpj.replace(/\D/g, '')],
    ['exterior_dest', '0'],
    ['cnpj_cpf_destinatario', doc],
    ['pessoa_destinatario', t.id.kind === 'cpf' ? 'F' : 'J'],
    ['ie_destinatario', 'isento'],
    ['im_destinatario', t.inscricaoMunicipal?.trim() || 'isento'],
    ['razao_social_destinatario', t.nome],
    ['endereco_destinatario', t.endereco?.logradouro ?? ''],
    ['numero_ende_destinatario', t.endereco?.numero ?? ''],
    ['complemento_ende_destinatario', t.endereco?.complemento ?? ''],
    ['bairro_destinatario', t.endereco?.bairro ?? ''],
    ['cep_destinatario', (t.endereco?.cep ?? '').replace(/\D/g, '')],
    ['cidade_destinatario', takerCity?.name ?? t.endereco?.cidade ?? ''],
    ['uf_destinatario', takerCity?.uf ?? t.endereco?.uf ?? ''],
    ['pais_destinatario', 'Brasil'],
    ['fone_destinatario', (t.telefone ?? '').replace(/\D/g, '')],
    ['email_destinatario', t.email ?? ''],
    ['valor_nf', money(invoice.total)],
    ['deducao', money(0)],
    ['valor_servico', money(invoice.total)],
    ['data_emissao', dateBrasilia(input.issuedAt)],
    ['forma_de_pagamento', ''],
    ['descricao', s.descricao.replace(/\r?\n/g, '|')],
    ['id_codigo_servico', s.subitem],
    ['cancelada', 'N'],
    ['iss_retido', invoice.iss.retido ? 'S' : 'N'],
    ['aliq_iss', money(aliquota)],
    ['valor_iss', money(iss)],
    ['bc_pis', money(pis.base)],
    ['aliq_pis', money(pis.aliquota)],
    ['valor_pis', money(pis.valor)],
    ['bc_cofins', money(cofins.base)],
    ['aliq_cofins', money(cofins.aliquota)],
    ['valor_cofins', money(cofins.valor)],
    ['bc_csll', money(csll.base)],
    ['aliq_csll', money(csll.aliquota)],
    ['valor_csll', money(csll.valor)],
    ['bc_irrf', money(irrf.base)],
    ['aliq_irrf', money(irrf.aliquota)],
    ['valor_irrf', money(irrf.valor)],
    ['bc_inss', money(inss.base)],
    ['aliq_inss', money(inss.aliquota)],
    ['valor_inss', money(inss.valor)],
    ['sistema_gerador', 'NFSE-API'],
    ['serie_rps', input.serie],
    ['rps', String(input.number)],
    ['codigo_nbs', dottedNbs(invoice.ibscbs?.nbs ?? s.nbs)],
    ['exterior_prestacao_servico', '0'],
    ['pais_local_prest', 'Brasil'],
    ['cidade_local_prest', place?.name ?? ''],
    ['uf_local_prest', place?.uf ?? ''],
  ];
  const body = fields.map(([name, value]) => `<${name}>${asciiText(value)}</${name}>`).join('');
  return `<?xml version="1.0" encoding="ISO-8859-1"?><notafiscal>${body}</notafiscal>`;
}

/** The RPS number and series of a prepared <notafiscal>. */
function rpsOf(xml: string): { rps: string; serie: string } {
  const parsed = parseXml(xml);
  if (!parsed.ok) throw new Error(`SigISSWeb: unreadable prepared note: ${parsed.message}`);
  return { rps: text(parsed.root, 'rps') ?? '', serie: text(parsed.root, 'serie_rps') ?? '' };
}

/** The login (CNPJ digits) and the web-service password of the project. */
function loginOf(context: SendContext): { login: string; senha: string } {
  const credentials = context.credentials ?? {};
  const login = (credentials.municipalUser ?? credentials.basicAuthUsuario ?? '').replace(/\D/g, '');
  if (!login) throw new MissingCredentialError('municipalUser');
  const senha = credentials.municipalPassword ?? credentials.basicAuthSenha;
  if (!senha) throw new MissingCredentialError('municipalPassword');
  return { login, senha };
}

type Read = { kind: 'note'; note: Element } | { kind: 'errors'; errors: GovernmentError[] } | { kind: 'transient' };

const SUCCESS_TEXT = /opera[cç][aã]o conclu[ií]da com sucesso/i;

/** Reads an answer: a <notafiscal> with its number, the `erro` list, or a plain text refusal. */
function readAnswer(answer: HttpResponse): Read {
  if (answer.status === 429 || answer.status >= 500) return { kind: 'transient' };
  const body = answer.body.trim();
  const parsed = body.startsWith('<') ? parseXml(body) : null;
  if (!parsed?.ok) {
    const message = body.replace(/\s+/g, ' ').slice(0, 500) || `HTTP ${answer.status} sem corpo`;
    return { kind: 'errors', errors: [{ Codigo: codeOf(message, `HTTP${answer.status}`), Descricao: message }] };
  }
  const root = parsed.root;
  if (root.localName === 'notafiscal' && text(root, 'numero_nf')) return { kind: 'note', note: root };
  const list = root.localName === 'erros' ? root : (childElements(root).find((c) => c.localName === 'erros') ?? root);
  const errors = childElements(list)
    .filter((c) => c.localName === 'erro')
    .map((e) => ({ codigo: text(e, 'codigo'), descricao: text(e, 'descricao') ?? '' }))
    .filter((e) => !SUCCESS_TEXT.test(e.descricao))
    .map((e) => ({ Codigo: codeOf(e.descricao, e.codigo ?? `HTTP${answer.status}`), Descricao: e.descricao }));
  if (errors.length > 0) return { kind: 'errors', errors };
  const message = (root.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 500);
  return {
    kind: 'errors',
    errors: [{ Codigo: `HTTP${answer.status}`, Descricao: message || `resposta sem nota (${root.localName})` }],
  };
}

/** "Already imported" keeps the engine's own code (the provider publishes none); any other refusal its own. */
function codeOf(message: string, code: string): string {
  return /j[aá] foi importad[oa] anteriormente/i.test(message) ? SIGISSWEB_ALREADY_IMPORTED : code;
}

function rejected(errors: GovernmentError[], httpStatus?: number): Outcome<never> {
  const first = errors[0] ?? { Codigo: 'SIGISSWEB', Descricao: 'recusa sem mensagem' };
  const duplicate = errors.find((e) => e.Codigo === SIGISSWEB_ALREADY_IMPORTED);
  return {
    kind: 'rejected',
    errorCode: (duplicate ?? first).Codigo,
    errorMessage: (duplicate ?? first).Descricao,
    errors,
    ...(httpStatus ? { httpStatus } : {}),
  };
}

/** dd/mm/aaaa[ hh:mm[:ss]] in Brasília, or now. */
function brasiliaDate(value: string | null): Date {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(value ?? '');
  if (!m) return new Date();
  const [, d, mo, y, h = '00', mi = '00', s = '00'] = m;
  const at = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}-03:00`);
  return Number.isNaN(at.getTime()) ? new Date() : at;
}

function issuedOf(note: Element, ambiente: 1 | 2): IssuedDocument {
  return {
    chave: null,
    numero: text(note, 'numero_nf') ?? '',
    verificationCode: text(note, 'codigo'),
    emittedAt: brasiliaDate(text(note, 'data_emissao')),
    xml: outerXml(note),
    ambiente,
  };
}

type Session = { kind: 'token'; token: string } | { kind: 'failure'; outcome: Outcome<never> };

/** `POST rest/login`: the token, or why there is none. */
async function login(context: SendContext, send: (r: OperationRequest) => Promise<HttpAnswer>): Promise<Session> {
  const { login: user, senha } = loginOf(context);
  const answer = await send({
    method: 'POST',
    url: rest(context, 'login'),
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ login: user, senha }),
  });
  if (answer.kind !== 'response') return { kind: 'failure', outcome: transportFailure(answer) };
  if (answer.status === 429 || answer.status >= 500) {
    return { kind: 'failure', outcome: { kind: 'transient', reason: `SigISSWeb login: HTTP ${answer.status}` } };
  }
  let token = answer.body.trim();
  if (token.startsWith('{')) {
    try {
      const json = JSON.parse(token) as Record<string, unknown>;
      token = String(json.token ?? json.access_token ?? '');
    } catch {
      token = '';
    }
  }
  token = token.replace(/^"|"$/g, '').trim();
  if (answer.status >= 400 || !token || token.startsWith('<')) {
    const read = readAnswer(answer);
    const errors = read.kind === 'errors' ? read.errors : [];
    return {
      kind: 'failure',
      outcome: rejected(
        [{ Codigo: 'SIGISSWEB_LOGIN', Descricao: errors.map((e) => e.Descricao).join('; ') || 'login recusado' }],
        answer.status,
      ),
    };
  }
  return { kind: 'token', token };
}

/** `GET rest/nfes/pegaxml/{rps}/serierps/{serie}`: the note of the RPS, null when the provider has none. */
async function noteOfRps(
  context: SendContext,
  send: (r: OperationRequest) => Promise<HttpAnswer>,
  token: string,
  key: { rps: string; serie: string },
): Promise<Outcome<IssuedDocument | null>> {
  const answer = await send({
    method: 'GET',
    url: rest(context, `nfes/pegaxml/${encodeURIComponent(key.rps)}/serierps/${encodeURIComponent(key.serie)}`),
    headers: { authorization: token, accept: 'application/xml' },
  });
  if (answer.kind !== 'response') return transportFailure(answer);
  const read = readAnswer(answer);
  if (read.kind === 'transient') return { kind: 'transient', reason: `SigISSWeb RPS query: HTTP ${answer.status}` };
  if (read.kind === 'note') {
    const rps = text(read.note, 'rps');
    if (rps && rps !== key.rps) return { kind: 'unknown', reason: `SigISSWeb answered RPS ${rps} for ${key.rps}` };
    return { kind: 'ok', value: issuedOf(read.note, context.ambiente) };
  }
  if (answer.status === 404 || read.errors.some((e) => /n[aã]o encontrad/i.test(e.Descricao))) {
    return { kind: 'ok', value: null };
  }
  return rejected(read.errors, answer.status);
}

export const sigIssWebDefinition = defineFamily({
  id: 'own-layout',
  provider: 'SigISSWeb',
  layout: 'SigISSWeb own XML layout (<notafiscal>) over REST, login token',
  transport: 'http-xml',
  auth: 'body-credentials',
  capabilities: {
    cancel: false,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'none',
    homologation: true,
    reconcile: true,
  },
  check(project, invoice) {
    const unmet: { field: string; message: string }[] = [];
    const t = invoice.tomador;
    if (t.estrangeiro || (t.id.kind !== 'cnpj' && t.id.kind !== 'cpf')) {
      unmet.push({
        field: 'tomador',
        message: 'SigISSWeb: the taker needs a CPF or CNPJ (foreign takers unsupported)',
      });
    } else if (!t.endereco?.codigoMunicipio || !findMunicipality(t.endereco.codigoMunicipio)) {
      unmet.push({ field: 'tomador.endereco', message: 'SigISSWeb: the taker needs a national address (its city)' });
    }
    if (invoice.servico.localPrestacao.kind !== 'municipio') {
      unmet.push({ field: 'servico.localPrestacao', message: 'SigISSWeb: services abroad are not supported' });
    }
    if (!/^\d{2}\.\d{2}$/.test(invoice.servico.subitem)) {
      unmet.push({ field: 'servico.codigo', message: 'SigISSWeb: the LC 116 item (NN.NN) is required' });
    }
    if (invoice.servico.descricao.length > 1000) {
      unmet.push({ field: 'servico.descricao', message: 'SigISSWeb: the description has at most 1000 characters' });
    }
    if (!/^[A-Za-z0-9]{1,10}$/.test(project.serieNfse)) {
      unmet.push({ field: 'project.serieNfse', message: 'SigISSWeb: the RPS series has 1 to 10 letters or digits' });
    }
    return unmet;
  },
  declaration: {
    build(input) {
      return { id: `${input.project.cnpj}-${input.serie}-${input.number}`, xml: notaFiscalXml(input) };
    },
    signedElement: null,
    schema: null,
    schemaErrorCode: 'SIGISSWEB_LAYOUT',
  },
  operations: {
    emit: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument>> {
        const session = await login(context, send);
        if (session.kind === 'failure') return session.outcome;
        const answer = await send({
          method: 'POST',
          url: rest(context, 'nfes'),
          headers: { authorization: session.token, 'content-type': 'application/xml' },
          body: document.xml,
        });
        if (answer.kind !== 'response') return transportFailure(answer);
        const read = readAnswer(answer);
        if (read.kind === 'transient') return { kind: 'transient', reason: `SigISSWeb: HTTP ${answer.status}` };
        if (read.kind === 'note') return { kind: 'ok', value: issuedOf(read.note, context.ambiente) };
        const refusal = rejected(read.errors, answer.status);
        if (refusal.kind === 'rejected' && refusal.errorCode === SIGISSWEB_ALREADY_IMPORTED) return refusal;
        // the refusal codes are not published: a note the provider holds for this RPS wins over any refusal
        const found = await noteOfRps(context, send, session.token, rpsOf(document.xml));
        if (found.kind === 'ok' && found.value) return { kind: 'ok', value: found.value };
        return refusal;
      },
    },
    query: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument | null>> {
        const session = await login(context, send);
        if (session.kind === 'failure') return session.outcome;
        return noteOfRps(context, send, session.token, rpsOf(document.xml));
      },
    },
  },
  alreadyProcessedCodes: [SIGISSWEB_ALREADY_IMPORTED],
  alreadyCancelledCodes: [],
});
