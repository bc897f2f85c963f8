import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { normalizeCnpj } from '../../domain/tax-ids.ts';
import { escapeXmlText } from '../../xml/escape.ts';
import { child, childElements, outerXml, parseXml, text } from '../../xml/read.ts';
import { MissingCredentialError } from '../kit/auth.ts';
import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpAnswer, HttpResponse } from '../kit/http-client.ts';
import { municipalityRegistry } from '../routing/municipality-registry.ts';
import type { CancellationRecord, GovernmentError, IssuedDocument, Outcome, PrepareInput } from '../types.ts';

/**
 * Agili ("AgiliBlue", 20 cities in MT, PA, AL and RO), own XML layout over plain HTTP: engine key `own-layout:agili`.
 * Sources (read for facts, no code taken):
 * - the provider's schema `nfse_v_1.00.xsd` (namespace `http://www.agili.com.br/nfse_v_1.00.xsd`), published in
 *   OpenAC-Net/OpenAC.Net.NFSe `src/OpenAC.Net.NFSe/Schemas/Agili/1.00/` (c64959c), shipped in `schemas/agili/`:
 *   every message and answer, `UnidadeGestora` (tsCnpj) first in each, `IdentificacaoPrestador` = `ChaveDigital`
 *   (32 characters) *or* an XML signature, then `CpfCnpj` and `InscricaoMunicipal`;
 * - ACBr `Provedores/Agili.Provider.pas`, `Agili.GravarXml.pas` (frones/ACBr 0149e4c): the messages GerarNfseEnvio
 *   (unitary), ConsultarNfseRpsEnvio, ConsultarNfseFaixaEnvio, CancelarNfseEnvio, each POSTed as is (no SOAP) to its
 *   own URL (ACBrNFSeXServicos.ini: `…/api/GerarNfse`, `…/api/ConsultarNfseRps`, `…/api/ConsultarNfseFaixa`,
 *   `…/api/CancelarNfse`); `UnidadeGestora` = ACBr's `CnpjPrefeitura`, the city hall's CNPJ; the key
 *   `ChaveDigital` = ACBr's `WSChaveAcesso`; no client certificate (`UseCertificateHTTP := False`), no signature;
 *   the codes of TipoRps (-2 RPS), ExigibilidadeISSQN (-1…-8), ResponsavelISSQN (-1 tomador), the city's tag of the
 *   activity code (registry option `NomeTagAtividadeEconomica`) and the DadosServico tags a city omits
 *   (`NaoGerarTag`); errors `ListaMensagemRetorno/MensagemRetorno{Codigo, Mensagem, Correcao}`;
 * - OpenAC `Providers/Agili/ProviderAgili.cs`, `AgiliServiceClient.cs`: `application/xml` POST; the note's
 *   `SituacaoNfse/Codigo` -2 = cancelled (else normal, -8), `CodigoAutenticidade` its verification code.
 *
 * Readings where the sources are silent (the sandbox, src/sandbox/own-layout/agili.ts, accepts only these):
 * - `UnidadeGestora` is the project's `cnpjPrefeitura` (a municipal parameter the customer sets: their city hall's
 *   CNPJ, public, validated with its check digits) and `ChaveDigital` its `accessToken`; both are written when a
 *   message is sent (the stored declaration holds neither), and the key the provider echoes in its answers (the
 *   schema's `tcNfse` holds the declaration whole) is masked in what is kept;
 * - the provider's message codes are not published: a refused emission is checked with the RPS query before it is
 *   believed (a resend of a processed RPS comes back ok with the note the provider holds); an RPS query answered
 *   with messages is "no note for this RPS" (the provider refuses an RPS number twice, so a resend cannot issue
 *   twice); a refused cancellation of a note the note query shows cancelled (`SituacaoNfse` -2) comes back with code
 *   `AGILI_CANCELADA` ("already cancelled"), other refusals with the provider's code;
 * - `CodigoCancelamento` codes are not published (ACBr passes the caller's): 1 is sent, "erro na emissão" as in
 *   ABRASF; the success branch of `CancelarNfseResposta` is the cancellation done (`DataHora`), and the note query
 *   (`ConsultarNfseFaixa`, `SituacaoNfse` -2, `DataCancelamento`) reads it back; whether a city only registers a
 *   request (`ProtocoloRequerimentoCancelamento`, `ConsultarRequerimentoCancelamento` situations -1…-5) is not
 *   documented: such a cancellation stays unconfirmed until the note query shows it;
 * - the activity code is `servico.codigoTributacaoMunicipal`, else the LC 116 subitem for cities whose tag is
 *   `ItemLei116AtividadeEconomica`, else the formatted CNAE (`99.9.9-9.99`); Brazilian takers only, one service line;
 * - the taker's `TipoLogradouro` is written empty (the platform has no street type; the schema allows it, ACBr writes
 *   it so when absent); `RegimeEspecialTributacao` is left out (optional) and the Simples Nacional option is
 *   `OptanteSimplesNacional`/`OptanteMEISimei`; `ValorISSQNRecolher` only outside the Simples Nacional, as ACBr does.
 */

export const AGILI_NS = 'http://www.agili.com.br/nfse_v_1.00.xsd';
const VERSAO = '<Versao>1.00</Versao>';
/** A cancellation refused for a note the provider shows cancelled (its own codes are unpublished). */
export const AGILI_ALREADY_CANCELLED = 'AGILI_CANCELADA';

const el = (name: string, value: string | null | undefined) =>
  value === null || value === undefined || value === '' ? '' : `<${name}>${escapeXmlText(value)}</${name}>`;
const de2 = (value: number) => (Math.round(value * 100) / 100).toFixed(2);
const digits = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');

/** Brasília (UTC-3) calendar date of an instant. */
const brasiliaDate = (at: Date) => new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 10);

function cityOptions(municipality: string | null): Record<string, string | boolean> {
  return (municipality ? municipalityRegistry().find(municipality)?.parameters?.options : undefined) ?? {};
}

/** The city hall's CNPJ (`UnidadeGestora`) and the taxpayer's key (`ChaveDigital`) of a send. */
function parametersOf(context: SendContext): { unidade: string; chave: string } {
  const unidade = normalizeCnpj(context.credentials?.cnpjPrefeitura ?? '');
  if (!unidade) throw new MissingCredentialError('cnpjPrefeitura');
  const chave = context.credentials?.accessToken;
  if (!chave) throw new MissingCredentialError('accessToken');
  return { unidade, chave };
}

/** A stored message with the send's parameters written in (UnidadeGestora first, ChaveDigital first in the prestador). */
function withParameters(xml: string, unidade: string, chave: string): string {
  return xml
    .replace(/^(<\w+ xmlns="[^"]+">)/, `$1<UnidadeGestora>${unidade}</UnidadeGestora>`)
    .replaceAll(
      '<IdentificacaoPrestador>',
      `<IdentificacaoPrestador><ChaveDigital>${escapeXmlText(chave)}</ChaveDigital>`,
    );
}

function prestadorXml(cnpj: string, inscricaoMunicipal: string | null | undefined): string {
  return `<IdentificacaoPrestador><CpfCnpj><Cnpj>${cnpj}</Cnpj></CpfCnpj>${el('InscricaoMunicipal', inscricaoMunicipal)}</IdentificacaoPrestador>`;
}

function tomadorXml(invoice: NormalizedInvoice): string {
  const t = invoice.tomador;
  const a = t.endereco;
  const id = t.id.kind === 'cnpj' ? el('Cnpj', t.id.cnpj) : t.id.kind === 'cpf' ? el('Cpf', t.id.cpf) : '';
  const phone = digits(t.telefone);
  const contato = (phone.length >= 8 ? el('Telefone', phone.slice(0, 14)) : '') + el('Email', t.email?.slice(0, 300));
  return (
    '<DadosTomador>' +
    (id
      ? `<IdentificacaoTomador><CpfCnpj>${id}</CpfCnpj>${el('InscricaoMunicipal', t.inscricaoMunicipal)}</IdentificacaoTomador>`
      : '') +
    el('RazaoSocial', t.nome.slice(0, 115)) +
    '<LocalEndereco>1</LocalEndereco>' +
    '<Endereco><TipoLogradouro></TipoLogradouro>' +
    `<Logradouro>${escapeXmlText((a?.logradouro ?? '').slice(0, 120))}</Logradouro>` +
    el('Numero', a?.numero?.slice(0, 10)) +
    el('Complemento', a?.complemento?.slice(0, 300)) +
    el('Bairro', a?.bairro?.slice(0, 120)) +
    `<Municipio><CodigoMunicipioIBGE>${digits(a?.codigoMunicipio)}</CodigoMunicipioIBGE>${el('Descricao', a?.cidade)}${el('Uf', a?.uf)}</Municipio>` +
    '<Pais><CodigoPaisBacen>1058</CodigoPaisBacen></Pais>' +
    `<Cep>${digits(a?.cep)}</Cep></Endereco>` +
    (contato ? `<Contato>${contato}</Contato>` : '') +
    '</DadosTomador>'
  );
}

/** ExigibilidadeISSQN of the national tribISSQN (1 taxable, 2 immune, 3 export, 4 no incidence). */
const EXIGIBILIDADE: Record<number, string> = { 1: '-1', 2: '-5', 3: '-4', 4: '-2' };

function formatCnae(cnae: string | null | undefined): string | null {
  const d = digits(cnae);
  return d.length === 7 ? `${d.slice(0, 2)}.${d[2]}.${d[3]}-${d[4]}.${d.slice(5)}` : null;
}

/** The city's activity tag and its value (ACBr `NomeTagAtividadeEconomica`), null when the invoice has none. */
function activityOf(invoice: NormalizedInvoice, project: ProjectFiscalProfile): { tag: string; value: string | null } {
  const tag = String(cityOptions(project.codigoMunicipio).NomeTagAtividadeEconomica ?? 'ItemLei116AtividadeEconomica');
  const own = invoice.servico.codigoTributacaoMunicipal;
  if (own) return { tag, value: own };
  if (tag === 'ItemLei116AtividadeEconomica') return { tag, value: invoice.servico.subitem || null };
  return { tag, value: formatCnae(invoice.servico.cnae ?? project.cnae) };
}

export function declaracaoXml(input: Omit<PrepareInput, 'certificate'>): string {
  const { project, invoice } = input;
  const s = invoice.servico;
  const omit = String(cityOptions(project.codigoMunicipio).NaoGerarTag ?? '').split(',');
  const simples = invoice.regime.simples || invoice.regime.mei;
  const iss = Math.round(invoice.total * invoice.iss.aliquota) / 100;
  const federal = invoice.federal;
  const pis = federal?.pisCofins?.tipoRetencao ? (federal.pisCofins.valorPis ?? 0) : 0;
  const cofins = federal?.pisCofins?.tipoRetencao ? (federal.pisCofins.valorCofins ?? 0) : 0;
  const retencoes =
    (federal?.retencaoIrrf ?? 0) + (federal?.retencaoCp ?? 0) + (federal?.retencaoCsll ?? 0) + pis + cofins;
  const liquido = invoice.total - retencoes - (invoice.iss.retido ? iss : 0);
  const activity = activityOf(invoice, project);
  const observacao = [s.informacoesComplementares, invoice.referencia ? `Ref.: ${invoice.referencia}` : null]
    .filter(Boolean)
    .join(' ')
    .slice(0, 4000);
  const incidencia = s.municipioIncidencia ?? project.codigoMunicipio ?? '';
  return (
    `<GerarNfseEnvio xmlns="${AGILI_NS}"><DeclaracaoPrestacaoServico>` +
    prestadorXml(project.cnpj, project.inscricaoMunicipal) +
    `<Rps><IdentificacaoRps><Numero>${input.number}</Numero><Serie>${escapeXmlText(input.serie)}</Serie>` +
    `<Tipo>-2</Tipo></IdentificacaoRps><DataEmissao>${brasiliaDate(input.issuedAt)}</DataEmissao></Rps>` +
    tomadorXml(invoice) +
    `<OptanteSimplesNacional>${simples ? 1 : 0}</OptanteSimplesNacional>` +
    `<OptanteMEISimei>${invoice.regime.mei ? 1 : 0}</OptanteMEISimei>` +
    `<ISSQNRetido>${invoice.iss.retido ? 1 : 0}</ISSQNRetido>` +
    (invoice.iss.retido ? '<ResponsavelISSQN><Codigo>-1</Codigo></ResponsavelISSQN>' : '') +
    el(activity.tag, activity.value) +
    `<ExigibilidadeISSQN><Codigo>${EXIGIBILIDADE[invoice.iss.tribISSQN]}</Codigo></ExigibilidadeISSQN>` +
    `<MunicipioIncidencia><CodigoMunicipioIBGE>${incidencia}</CodigoMunicipioIBGE></MunicipioIncidencia>` +
    `<ValorServicos>${de2(invoice.total)}</ValorServicos><ValorDescontos>0.00</ValorDescontos>` +
    `<ValorPis>${de2(pis)}</ValorPis><ValorCofins>${de2(cofins)}</ValorCofins>` +
    `<ValorInss>${de2(federal?.retencaoCp ?? 0)}</ValorInss><ValorIrrf>${de2(federal?.retencaoIrrf ?? 0)}</ValorIrrf>` +
    `<ValorCsll>${de2(federal?.retencaoCsll ?? 0)}</ValorCsll><ValorOutrasRetencoes>0.00</ValorOutrasRetencoes>` +
    `<ValorBaseCalculoISSQN>${de2(invoice.total)}</ValorBaseCalculoISSQN>` +
    `<AliquotaISSQN>${de2(invoice.iss.aliquota)}</AliquotaISSQN><ValorISSQNCalculado>${de2(iss)}</ValorISSQNCalculado>` +
    (simples ? '' : `<ValorISSQNRecolher>${de2(iss)}</ValorISSQNRecolher>`) +
    `<ValorDeducaoConstCivil>0.00</ValorDeducaoConstCivil><ValorLiquido>${de2(liquido)}</ValorLiquido>` +
    el('Observacao', observacao) +
    '<ListaServico><DadosServico>' +
    el('Discriminacao', s.descricao.slice(0, 2000)) +
    (omit.includes('CodigoCnae') ? '' : el('CodigoCnae', formatCnae(s.cnae ?? project.cnae))) +
    (omit.includes('ItemLei116') ? '' : el('ItemLei116', s.subitem)) +
    `<Quantidade>1.00000</Quantidade><ValorServico>${de2(invoice.total)}</ValorServico>` +
    '<ValorDesconto>0.00</ValorDesconto></DadosServico></ListaServico>' +
    `${VERSAO}</DeclaracaoPrestacaoServico></GerarNfseEnvio>`
  );
}

/** The URL of an operation: the registry's `…/api/<Operation>` with its last segment replaced. */
function url(context: SendContext, operation: string): string {
  const base = context.endpoints.url(
    operation === 'CancelarNfse' ? 'cancel' : 'emit',
    context.ambiente,
    context.municipality,
  );
  const api = /\/api\/[A-Za-z]+\/?$/;
  return api.test(base) ? base.replace(api, `/api/${operation}`) : `${base.replace(/\/$/, '')}/${operation}`;
}

function post(context: SendContext, operation: string, xml: string): OperationRequest {
  return {
    method: 'POST',
    url: url(context, operation),
    headers: { 'content-type': 'application/xml; charset=utf-8', accept: 'application/xml' },
    body: `<?xml version="1.0" encoding="UTF-8"?>${xml}`,
  };
}

type Read = { kind: 'answer'; root: Element } | { kind: 'failure'; outcome: Outcome<never> };

/** An answer's root (`<name>`), its messages as a rejection, or the transport's reading. */
function readAnswer(answer: HttpResponse, name: string): Read {
  if (answer.status === 429 || answer.status >= 500) {
    return {
      kind: 'failure',
      outcome: { kind: 'transient', reason: `HTTP ${answer.status}`, httpStatus: answer.status },
    };
  }
  const parsed = parseXml(answer.body);
  if (!parsed.ok || parsed.root.localName !== name) {
    const reason = `HTTP ${answer.status}: Agili answer without ${name}`;
    return answer.status >= 400
      ? {
          kind: 'failure',
          outcome: { kind: 'rejected', errorCode: `HTTP${answer.status}`, errorMessage: reason, errors: [] },
        }
      : { kind: 'failure', outcome: { kind: 'unknown', reason } };
  }
  const list = childElements(parsed.root).find((e) => e.localName === 'ListaMensagemRetorno');
  if (list) {
    const errors: GovernmentError[] = childElements(list).map((m) => ({
      Codigo: text(m, 'Codigo') ?? 'AGILI',
      Descricao: text(m, 'Mensagem') ?? 'recusa sem mensagem',
      Complemento: text(m, 'Correcao'),
    }));
    const first = errors[0] ?? { Codigo: 'AGILI', Descricao: 'recusa sem mensagem' };
    return {
      kind: 'failure',
      outcome: {
        kind: 'rejected',
        errorCode: first.Codigo,
        errorMessage: first.Descricao,
        errors,
        httpStatus: answer.status,
      },
    };
  }
  return { kind: 'answer', root: parsed.root };
}

/** A document as kept: the provider echoes the key (`ChaveDigital`) in it; it is masked, at its schema length. */
const masked = (xml: string) =>
  xml.replace(/<ChaveDigital>[^<]*<\/ChaveDigital>/g, `<ChaveDigital>${'*'.repeat(32)}</ChaveDigital>`);

function issuedOf(nfse: Element, ambiente: 1 | 2): IssuedDocument | null {
  const numero = text(nfse, 'Numero');
  if (!numero) return null;
  const at = new Date(text(nfse, 'DataEmissao') ?? '');
  return {
    chave: null,
    numero,
    verificationCode: text(nfse, 'CodigoAutenticidade'),
    emittedAt: Number.isNaN(at.getTime()) ? new Date() : at,
    xml: masked(outerXml(nfse)),
    ambiente,
  };
}

const rpsOf = (xml: string) => {
  const parsed = parseXml(xml);
  const id = parsed.ok ? child(parsed.root, 'DeclaracaoPrestacaoServico/Rps/IdentificacaoRps') : null;
  const prestador = parsed.ok ? child(parsed.root, 'DeclaracaoPrestacaoServico/IdentificacaoPrestador') : null;
  return {
    numero: text(id, 'Numero') ?? '',
    serie: text(id, 'Serie') ?? '',
    prestador: prestador ? outerXml(prestador) : '',
  };
};

type Send = (request: OperationRequest) => Promise<HttpAnswer>;

/** The note the provider holds for the RPS of a stored declaration: null when none. */
async function queryByRps(xml: string, context: SendContext, send: Send): Promise<Outcome<IssuedDocument | null>> {
  const { unidade, chave } = parametersOf(context);
  const rps = rpsOf(xml);
  const message =
    `<ConsultarNfseRpsEnvio xmlns="${AGILI_NS}"><IdentificacaoRps><Numero>${rps.numero}</Numero>` +
    `<Serie>${escapeXmlText(rps.serie)}</Serie><Tipo>-2</Tipo></IdentificacaoRps>` +
    `${rps.prestador.replace(/ xmlns="[^"]*"/, '')}${VERSAO}</ConsultarNfseRpsEnvio>`;
  const answer = await send(post(context, 'ConsultarNfseRps', withParameters(message, unidade, chave)));
  if (answer.kind !== 'response') return transportFailure(answer);
  const read = readAnswer(answer, 'ConsultarNfseRpsResposta');
  if (read.kind === 'failure') return read.outcome.kind === 'rejected' ? { kind: 'ok', value: null } : read.outcome;
  const nfse = childElements(read.root).find((e) => e.localName === 'Nfse');
  return { kind: 'ok', value: nfse ? issuedOf(nfse, context.ambiente) : null };
}

/** The note of a number (`ConsultarNfseFaixa`): its element, or null when the provider has none. */
async function noteByNumber(
  numero: string,
  inscricaoMunicipal: string | null | undefined,
  providerCnpj: string,
  context: SendContext,
  send: Send,
): Promise<Outcome<{ nfse: Element; body: string } | null>> {
  const { unidade, chave } = parametersOf(context);
  const message =
    `<ConsultarNfseFaixaEnvio xmlns="${AGILI_NS}">${prestadorXml(providerCnpj, inscricaoMunicipal)}` +
    `<NumeroNfseInicial>${numero}</NumeroNfseInicial><NumeroNfseFinal>${numero}</NumeroNfseFinal>${VERSAO}` +
    '</ConsultarNfseFaixaEnvio>';
  const answer = await send(post(context, 'ConsultarNfseFaixa', withParameters(message, unidade, chave)));
  if (answer.kind !== 'response') return transportFailure(answer);
  const read = readAnswer(answer, 'ConsultarNfseFaixaResposta');
  if (read.kind === 'failure') return read.outcome;
  const list = childElements(read.root).find((e) => e.localName === 'ListaNfse');
  const nfse = list ? childElements(list).find((e) => e.localName === 'Nfse' && text(e, 'Numero') === numero) : null;
  return { kind: 'ok', value: nfse ? { nfse, body: answer.body } : null };
}

function cancellationOf(nfse: Element, xml: string): CancellationRecord | null {
  if (text(nfse, 'SituacaoNfse/Codigo') !== '-2') return null;
  const at = new Date(text(nfse, 'SituacaoNfse/DataCancelamento') ?? '');
  return { cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at, xml: masked(xml) };
}

export const agiliDefinition = defineFamily({
  id: 'own-layout',
  provider: 'Agili',
  layout: 'Agili own XML layout 1.00 (nfse_v_1.00.xsd) over HTTP POST, ChaveDigital and UnidadeGestora in the message',
  transport: 'http-xml',
  auth: 'body-credentials',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'none',
    homologation: false,
    reconcile: true,
  },
  check(project, invoice) {
    const unmet: { field: string; message: string }[] = [];
    const t = invoice.tomador;
    if (t.estrangeiro || (t.id.kind !== 'cnpj' && t.id.kind !== 'cpf')) {
      unmet.push({ field: 'tomador', message: 'Agili: the taker must be Brazilian, with CPF or CNPJ' });
    } else if (!t.endereco?.codigoMunicipio || digits(t.endereco.cep).length !== 8) {
      unmet.push({
        field: 'tomador.endereco',
        message: 'Agili: the taker needs a national address with IBGE code and CEP',
      });
    }
    if (!activityOf(invoice, project).value) {
      unmet.push({
        field: 'servico.codigoTributacaoMunicipal',
        message: "Agili: the city's activity code (or the CNAE, 7 digits) is required",
      });
    }
    if (invoice.iss.aliquota >= 100) {
      unmet.push({ field: 'valores.aliquota', message: 'Agili: the ISS rate has at most two integer digits' });
    }
    if (!/^\d{0,5}$/.test(project.serieNfse)) {
      unmet.push({ field: 'project.serieNfse', message: 'Agili: the RPS series has at most 5 characters' });
    }
    return unmet;
  },
  declaration: {
    build(input) {
      return { id: `${input.serie}-${input.number}`, xml: declaracaoXml(input) };
    },
    signedElement: null,
    schema: 'agili',
    // the stored declaration lacks the send's parameters: validated with placeholders of their lengths
    schemaView: (xml) => withParameters(xml, '0'.repeat(14), '0'.repeat(32)),
    schemaErrorCode: 'AGILI_SCHEMA',
  },
  operations: {
    emit: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument>> {
        const { unidade, chave } = parametersOf(context);
        const answer = await send(post(context, 'GerarNfse', withParameters(document.xml, unidade, chave)));
        if (answer.kind !== 'response') return transportFailure(answer);
        const read = readAnswer(answer, 'GerarNfseResposta');
        if (read.kind === 'failure') {
          if (read.outcome.kind !== 'rejected') return read.outcome;
          // a refusal is believed only when the provider holds no note for the RPS (a resend after a lost answer)
          const held = await queryByRps(document.xml, context, send);
          if (held.kind === 'ok') return held.value ? { kind: 'ok', value: held.value } : read.outcome;
          return { kind: 'unknown', reason: `Agili refused (${read.outcome.errorMessage}); its RPS query failed` };
        }
        const nfse = childElements(read.root).find((e) => e.localName === 'Nfse');
        const issued = nfse ? issuedOf(nfse, context.ambiente) : null;
        return issued ? { kind: 'ok', value: issued } : { kind: 'unknown', reason: 'Agili answer without Nfse/Numero' };
      },
    },
    query: {
      exchange: (document, context, send) => queryByRps(document.xml, context, send),
    },
    cancel: {
      message: {
        build({ issued, reason }) {
          const justificativa = (reason ?? '').trim().padEnd(10, '.').slice(0, 1000) || 'Cancelamento solicitado';
          const xml =
            `<CancelarNfseEnvio xmlns="${AGILI_NS}"><PedidoCancelamento><IdentificacaoNfse>` +
            `<Numero>${digits(issued.numero)}</Numero>${prestadorXml(issued.providerCnpj, issued.inscricaoMunicipal)}` +
            `</IdentificacaoNfse><CodigoCancelamento>1</CodigoCancelamento>` +
            `<JustificativaCancelamento>${escapeXmlText(justificativa)}</JustificativaCancelamento>${VERSAO}` +
            '</PedidoCancelamento></CancelarNfseEnvio>';
          return { id: `cancel-${issued.numero}`, xml };
        },
        signedElement: null,
        schema: 'agili',
        schemaView: (xml) => withParameters(xml, '0'.repeat(14), '0'.repeat(32)),
        schemaErrorCode: 'AGILI_SCHEMA',
      },
      operation: {
        async exchange({ signed, input }, context, send): Promise<Outcome<CancellationRecord>> {
          const { unidade, chave } = parametersOf(context);
          const answer = await send(post(context, 'CancelarNfse', withParameters(signed, unidade, chave)));
          if (answer.kind !== 'response') return transportFailure(answer);
          const read = readAnswer(answer, 'CancelarNfseResposta');
          if (read.kind === 'failure') {
            if (read.outcome.kind !== 'rejected' || !input.issued.numero) return read.outcome;
            // the provider's codes are unpublished: the note query tells whether the note is cancelled already
            const { numero, inscricaoMunicipal, providerCnpj } = input.issued;
            const note = await noteByNumber(numero, inscricaoMunicipal, providerCnpj, context, send);
            if (note.kind !== 'ok')
              return { kind: 'unknown', reason: `Agili refused the cancellation; its query failed` };
            const done = note.value ? cancellationOf(note.value.nfse, note.value.body) : null;
            if (!done) return read.outcome;
            const cancelled = { Codigo: AGILI_ALREADY_CANCELLED, Descricao: 'NFS-e já cancelada (SituacaoNfse -2)' };
            return { ...read.outcome, errorCode: AGILI_ALREADY_CANCELLED, errors: [cancelled, ...read.outcome.errors] };
          }
          const at = new Date(text(read.root, 'DataHora') ?? '');
          if (Number.isNaN(at.getTime())) {
            return {
              kind: 'unknown',
              reason: 'Agili cancellation answer without DataHora (a request to be evaluated?)',
            };
          }
          return { kind: 'ok', value: { cancelledAt: at, xml: masked(answer.body) } };
        },
      },
    },
    queryCancellation: {
      async exchange(issued, context, send): Promise<Outcome<CancellationRecord | null>> {
        if (!issued.numero) return { kind: 'ok', value: null };
        // the note's provider is the project, whose CNPJ its certificate carries
        const cnpj = context.certificate.cnpj ?? '';
        const note = await noteByNumber(issued.numero, issued.inscricaoMunicipal, cnpj, context, send);
        if (note.kind !== 'ok') return note;
        return { kind: 'ok', value: note.value ? cancellationOf(note.value.nfse, note.value.body) : null };
      },
    },
  },
  alreadyProcessedCodes: [],
  alreadyCancelledCodes: [AGILI_ALREADY_CANCELLED],
});
