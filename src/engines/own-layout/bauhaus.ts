import type { NormalizedInvoice } from '../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../domain/project-profile.ts';
import { gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { escapeXmlText } from '../../xml/escape.ts';
import { transportFailure } from '../kit/engine.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import type { HttpResponse } from '../kit/http-client.ts';
import type { CancellationRecord, GovernmentError, IssuedDocument, Outcome } from '../types.ts';

/**
 * Bauhaus ("Prefeitura Moderna"), own JSON layout over REST: engine key `own-layout:bauhaus` (9 cities, one API host
 * per city, `https://api-nfse-<city>-<uf>.prefeituramoderna.com.br/ws/services/<operation>`).
 *
 * Sources (facts only, no code copied): ACBr `Provedores/Bauhaus.Provider.pas`, `Bauhaus.GravarJson.pas`
 * (ProjetoACBr/ACBr), and the ACBr .ini URLs of the registry.
 *
 *   POST …/gerar      {DadosNota:{MunicipioPrestacao, NaturezaOperacao, IssRetido S|N, Observacoes, Atividade{Codigo,
 *                      CodigoCnae, CodigoLc116}, Prestador{InscricaoMunicipal}, Tomador{TipoPessoa F|J|E, NrDocumento,
 *                      RazaoSocial, Endereco{…, Municipio, Cep}, Contato{Telefone, Email}}, Rps{Numero, Serie, Tipo 1,
 *                      DataEmissao}, Servicos[{Unidade, Quantidade, Descricao, ValorUnitario}], Valores{…}}}
 *                      → {DadosNfse:{Numero, Mensagem}}
 *   GET  …/consultar?NumeroRps=N → {DadosNfse:{NumeroNfse, Rps{Numero, Serie}, DataEmissao, LinkNfse, CodigoValidacao,
 *                      SituacaoNfse (2 cancelled), Cancelamento{Data}}}
 *   POST …/cancelar   {DadosNota:{Numero, Cancelamento{Motivo}, Prestador{InscricaoMunicipal}}}
 *                      → {DadosNfse:{Numero, DataCancelamento}}
 *   errors: {Message:{Code, Message, MessageDev, Detail, DetailDev, DetailError[]}}; ACBr keeps characters 6–8 of
 *   `Code` as the error code.
 *   auth: `Authorization: <chave de autorização>` (ACBr SetHeaders, WSChaveAutoriz), no client certificate, no
 *   signature: the project's `authorizationKey` (the registry's traits for Bauhaus are the family default: the key
 *   is enforced when the job sends, ENGINE_CREDENTIALS_MISSING).
 *
 * Readings where the sources are silent (the sandbox, src/sandbox/own-layout/bauhaus.ts, accepts only these):
 * - the registry keeps one URL per city (…/gerar); the other operations replace the last path segment;
 * - the emission answer has no verification code: the emission asks `consultar?NumeroRps` right after, and a
 *   failure of that query leaves the code empty (the note is issued all the same);
 * - `Atividade.Codigo` is the city's activity code: the request's `servico.codigoTributacaoMunicipal` is required;
 * - `Aliquota` in percent, amounts with two decimals, `DataEmissao` ISO date-time with the Brasília offset;
 * - the error codes are not published: "already processed" (the RPS already became a note) is 020, "already
 *   cancelled" 030, "not found" 040 (the sandbox's codes; `Code` written `ERRO-NNN`); an RPS query answered 404 or
 *   040 is "none", any other refusal of a query is retried, never believed;
 * - only taxable and immune services (NaturezaOperacao 1, 2, 4 as in ABRASF 1); foreign takers are refused.
 */

export const BAUHAUS_ALREADY_PROCESSED = '020';
export const BAUHAUS_ALREADY_CANCELLED = '030';
const BAUHAUS_NOT_FOUND = '040';

const round2 = (value: number) => Math.round(value * 100) / 100;

/** The URL of an operation: the registry's …/gerar with its last segment replaced. */
function url(context: SendContext, operation: 'gerar' | 'consultar' | 'cancelar'): string {
  const base = context.endpoints.url('emit', context.ambiente, context.municipality);
  return /\/(gerar|consultar|cancelar|substituir)\/?$/.test(base)
    ? base.replace(/\/(gerar|consultar|cancelar|substituir)\/?$/, `/${operation}`)
    : `${base.replace(/\/$/, '')}/${operation}`;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', accept: 'application/json' };

function naturezaOperacao(project: ProjectFiscalProfile, invoice: NormalizedInvoice): number | null {
  if (invoice.iss.tribISSQN === 2) return 4;
  if (invoice.iss.tribISSQN !== 1) return null;
  const incidence = invoice.servico.municipioIncidencia ?? project.codigoMunicipio;
  return incidence === project.codigoMunicipio ? 1 : 2;
}

/** Brasília ISO date-time with offset. */
function isoBrasilia(at: Date): string {
  return `${new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 19)}-03:00`;
}

export function dadosNota(input: {
  project: ProjectFiscalProfile;
  invoice: NormalizedInvoice;
  serie: string;
  number: number;
  issuedAt: Date;
}): Record<string, unknown> {
  const { project, invoice } = input;
  const s = invoice.servico;
  const t = invoice.tomador;
  const doc = t.id.kind === 'cnpj' ? t.id.cnpj : t.id.kind === 'cpf' ? t.id.cpf : '';
  const iss = round2((invoice.total * invoice.iss.aliquota) / 100);
  const federal = invoice.federal;
  const retencoes = (federal?.retencaoIrrf ?? 0) + (federal?.retencaoCp ?? 0) + (federal?.retencaoCsll ?? 0);
  const liquido = round2(invoice.total - retencoes - (invoice.iss.retido ? iss : 0));
  const local = s.localPrestacao.kind === 'municipio' ? s.localPrestacao.codigoMunicipio : project.codigoMunicipio;
  const observacoes = [s.informacoesComplementares, invoice.referencia ? `Ref.: ${invoice.referencia}` : null]
    .filter(Boolean)
    .join(' ');
  return {
    DadosNota: {
      MunicipioPrestacao: Number(local),
      NaturezaOperacao: naturezaOperacao(project, invoice),
      IssRetido: invoice.iss.retido ? 'S' : 'N',
      Observacoes: observacoes,
      Atividade: {
        Codigo: Number(s.codigoTributacaoMunicipal ?? 0),
        CodigoCnae: s.cnae ?? project.cnae ?? '',
        CodigoLc116: s.subitem,
      },
      Prestador: { InscricaoMunicipal: (project.inscricaoMunicipal ?? '').replace(/\D/g, '') },
      Tomador: {
        TipoPessoa: t.id.kind === 'cpf' ? 'F' : 'J',
        NrDocumento: doc,
        RazaoSocial: t.nome,
        Endereco: {
          Logradouro: t.endereco?.logradouro ?? '',
          Numero: t.endereco?.numero ?? '',
          Complemento: t.endereco?.complemento ?? '',
          Bairro: t.endereco?.bairro ?? '',
          Municipio: Number(t.endereco?.codigoMunicipio ?? 0),
          Cep: Number((t.endereco?.cep ?? '').replace(/\D/g, '') || 0),
        },
        Contato: { Telefone: t.telefone ?? '', Email: t.email ?? '' },
      },
      Rps: { Numero: input.number, Serie: Number(input.serie) || 0, Tipo: 1, DataEmissao: isoBrasilia(input.issuedAt) },
      Servicos: [{ Unidade: 'UN', Quantidade: 1, Descricao: s.descricao, ValorUnitario: invoice.total }],
      Valores: {
        ValorServicos: invoice.total,
        ValorDeducoes: 0,
        ValorOutrasDeducoes: 0,
        ValorPis: 0,
        ValorCofins: 0,
        ValorInss: federal?.retencaoCp ?? 0,
        ValorIr: federal?.retencaoIrrf ?? 0,
        ValorCsll: federal?.retencaoCsll ?? 0,
        OutrasRetencoes: 0,
        DescontoIncondicionado: 0,
        DescontoCondicionado: 0,
        BaseCalculo: invoice.total,
        Aliquota: invoice.iss.aliquota,
        ValorIss: iss,
        ValorLiquidoNota: liquido,
        ValorTotalTributos: 0,
        ValorCredito: 0,
        ValorTotalNota: liquido,
      },
    },
  };
}

type Read = { kind: 'data'; body: Record<string, unknown> } | { kind: 'failure'; outcome: Outcome<never> };

/** Reads a JSON answer: transient 5xx/429, the `Message` error object, or the answer's data. */
function readAnswer(answer: HttpResponse): Read {
  if (answer.status === 429 || answer.status >= 500) {
    return {
      kind: 'failure',
      outcome: { kind: 'transient', reason: `HTTP ${answer.status}`, httpStatus: answer.status },
    };
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    return {
      kind: 'failure',
      outcome: {
        kind: 'rejected',
        errorCode: `HTTP${answer.status}`,
        errorMessage: answer.body.slice(0, 300),
        errors: [],
      },
    };
  }
  const message = body.Message as Record<string, unknown> | undefined;
  if (message && typeof message === 'object') {
    const raw = String(message.Code ?? '');
    const error: GovernmentError = {
      Codigo: raw.slice(5, 8).trim() || raw || `HTTP${answer.status}`,
      Descricao: [message.Message, message.MessageDev].filter(Boolean).join(' ').trim() || 'recusa sem mensagem',
      Complemento:
        [message.Detail, message.DetailDev, ...((message.DetailError as unknown[]) ?? [])]
          .filter(Boolean)
          .join(' ')
          .trim() || null,
    };
    return {
      kind: 'failure',
      outcome: {
        kind: 'rejected',
        errorCode: error.Codigo,
        errorMessage: error.Descricao,
        errors: [error],
        httpStatus: answer.status,
      },
    };
  }
  if (answer.status >= 400) {
    return {
      kind: 'failure',
      outcome: {
        kind: 'rejected',
        errorCode: `HTTP${answer.status}`,
        errorMessage: answer.body.slice(0, 300),
        errors: [],
      },
    };
  }
  return { kind: 'data', body };
}

/**
 * The note's XML: `XmlCompactado` (base64 of the compressed NFS-e XML, its `ComplNfse`, ACBr) when the answer has
 * it, else the JSON answer itself inside `<RespostaBauhaus>` (the provider answers JSON; the platform keeps XML).
 */
function noteXml(dados: Record<string, unknown>, body: string): string {
  const packed = typeof dados.XmlCompactado === 'string' ? Buffer.from(dados.XmlCompactado, 'base64') : null;
  if (packed && packed.length > 0) {
    for (const unpack of [gunzipSync, inflateSync, inflateRawSync]) {
      try {
        const xml = unpack(packed).toString('utf8');
        const compl = /<(\w+:)?ComplNfse[\s>][\s\S]*<\/(\w+:)?ComplNfse>/.exec(xml)?.[0];
        if (compl ?? xml.trim().startsWith('<')) return compl ?? xml.trim();
      } catch {
        // try the next format
      }
    }
  }
  return `<RespostaBauhaus formato="json">${escapeXmlText(body)}</RespostaBauhaus>`;
}

function issuedOf(dados: Record<string, unknown>, body: string, ambiente: 1 | 2): IssuedDocument | null {
  const numero = String(dados.NumeroNfse ?? dados.Numero ?? '');
  if (!numero) return null;
  const emittedAt = new Date(String(dados.DataEmissao ?? ''));
  return {
    chave: null,
    numero,
    verificationCode: dados.CodigoValidacao ? String(dados.CodigoValidacao) : null,
    emittedAt: Number.isNaN(emittedAt.getTime()) ? new Date() : emittedAt,
    xml: noteXml(dados, body),
    ambiente,
  };
}

const rpsNumberOf = (xml: string) =>
  String((JSON.parse(xml) as { DadosNota: { Rps: { Numero: number } } }).DadosNota.Rps.Numero);

function queryRequest(context: SendContext, rps: string): OperationRequest {
  return {
    method: 'GET',
    url: `${url(context, 'consultar')}?NumeroRps=${encodeURIComponent(rps)}`,
    headers: { ...JSON_HEADERS },
  };
}

/** The note of an RPS (`consultar?NumeroRps`): null when the provider has none. */
function parseQuery(answer: HttpResponse, ambiente: 1 | 2): Outcome<IssuedDocument | null> {
  const read = readAnswer(answer);
  if (read.kind === 'failure') {
    const outcome = read.outcome;
    if (outcome.kind === 'rejected' && (answer.status === 404 || outcome.errorCode === BAUHAUS_NOT_FOUND)) {
      return { kind: 'ok', value: null };
    }
    return outcome;
  }
  const dados = read.body.DadosNfse as Record<string, unknown> | undefined;
  return { kind: 'ok', value: dados ? issuedOf(dados, answer.body, ambiente) : null };
}

export const bauhausDefinition = defineFamily({
  id: 'own-layout',
  provider: 'Bauhaus',
  layout: 'Bauhaus (Prefeitura Moderna) own JSON layout over REST',
  transport: 'rest-json',
  auth: 'header-token',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'none',
    homologation: true,
    reconcile: true,
  },
  check(project, invoice) {
    const unmet: { field: string; message: string }[] = [];
    if (!project.inscricaoMunicipal) {
      unmet.push({
        field: 'project.inscricaoMunicipal',
        message: 'Bauhaus: the provider is identified by its inscrição municipal',
      });
    }
    if (!invoice.servico.codigoTributacaoMunicipal || !/^\d+$/.test(invoice.servico.codigoTributacaoMunicipal)) {
      unmet.push({
        field: 'servico.codigoTributacaoMunicipal',
        message: 'Bauhaus: the city activity code (Atividade.Codigo, numeric) is required',
      });
    }
    if (naturezaOperacao(project, invoice) === null) {
      unmet.push({
        field: 'valores.tributacaoIss',
        message: 'Bauhaus: only taxable or immune services have a NaturezaOperacao',
      });
    }
    const t = invoice.tomador;
    if (t.estrangeiro || (t.id.kind !== 'cnpj' && t.id.kind !== 'cpf')) {
      unmet.push({ field: 'tomador', message: 'Bauhaus: foreign takers are not supported by this engine' });
    } else if (!t.endereco?.codigoMunicipio) {
      unmet.push({ field: 'tomador.endereco', message: 'Bauhaus: the taker needs a national address' });
    }
    if (!/^\d+$/.test(project.serieNfse)) {
      unmet.push({ field: 'project.serieNfse', message: 'Bauhaus: the RPS series is numeric' });
    }
    return unmet;
  },
  declaration: {
    build(input) {
      return { id: `${input.project.cnpj}-${input.serie}-${input.number}`, xml: JSON.stringify(dadosNota(input)) };
    },
    signedElement: null,
    schema: null,
    schemaErrorCode: 'BAUHAUS_LAYOUT',
  },
  operations: {
    emit: {
      async exchange(document, context, send): Promise<Outcome<IssuedDocument>> {
        const answer = await send({
          method: 'POST',
          url: url(context, 'gerar'),
          headers: { ...JSON_HEADERS },
          body: document.xml,
        });
        if (answer.kind !== 'response') return transportFailure(answer);
        const read = readAnswer(answer);
        if (read.kind === 'failure') return read.outcome;
        const dados = read.body.DadosNfse as Record<string, unknown> | undefined;
        const issued = dados ? issuedOf(dados, answer.body, context.ambiente) : null;
        if (!issued) return { kind: 'unknown', reason: 'Bauhaus answer without DadosNfse.Numero' };
        // the emission answer carries no verification code: the RPS query has it
        const query = await send(queryRequest(context, rpsNumberOf(document.xml)));
        if (query.kind === 'response') {
          const found = parseQuery(query, context.ambiente);
          if (found.kind === 'ok' && found.value?.numero === issued.numero) return { kind: 'ok', value: found.value };
        }
        return { kind: 'ok', value: issued };
      },
    },
    query: {
      request: (document, context) => queryRequest(context, rpsNumberOf(document.xml)),
      parse: (answer, _document, context) => parseQuery(answer, context.ambiente),
    },
    cancel: {
      message: {
        build({ issued, reason }) {
          const body = {
            DadosNota: {
              Numero: Number(issued.numero),
              Cancelamento: { Motivo: (reason ?? 'Cancelamento solicitado pelo prestador').slice(0, 255) },
              Prestador: { InscricaoMunicipal: (issued.inscricaoMunicipal ?? '').replace(/\D/g, '') },
            },
          };
          return { id: `cancel-${issued.numero}`, xml: JSON.stringify(body) };
        },
        signedElement: null,
        schema: null,
        schemaErrorCode: 'BAUHAUS_LAYOUT',
      },
      operation: {
        request: ({ signed }, context) => ({
          method: 'POST',
          url: url(context, 'cancelar'),
          headers: { ...JSON_HEADERS },
          body: signed,
        }),
        parse(answer): Outcome<CancellationRecord> {
          const read = readAnswer(answer);
          if (read.kind === 'failure') return read.outcome;
          const dados = read.body.DadosNfse as Record<string, unknown> | undefined;
          if (!dados) return { kind: 'unknown', reason: 'Bauhaus cancellation answer without DadosNfse' };
          const at = new Date(String(dados.DataCancelamento ?? ''));
          return { kind: 'ok', value: { cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at, xml: answer.body } };
        },
      },
    },
    queryCancellation: {
      async exchange(issued, context, send): Promise<Outcome<CancellationRecord | null>> {
        if (!issued.numero) return { kind: 'ok', value: null };
        const answer = await send({
          method: 'GET',
          url: `${url(context, 'consultar')}?NumeroNfse=${encodeURIComponent(issued.numero)}`,
          headers: { ...JSON_HEADERS },
        });
        if (answer.kind !== 'response') return transportFailure(answer);
        const read = readAnswer(answer);
        if (read.kind === 'failure') return read.outcome;
        const dados = read.body.DadosNfse as Record<string, unknown> | undefined;
        if (String(dados?.SituacaoNfse ?? '') !== '2') return { kind: 'ok', value: null };
        const at = new Date(String((dados?.Cancelamento as Record<string, unknown> | undefined)?.Data ?? ''));
        return { kind: 'ok', value: { cancelledAt: Number.isNaN(at.getTime()) ? new Date() : at, xml: answer.body } };
      },
    },
  },
  alreadyProcessedCodes: [BAUHAUS_ALREADY_PROCESSED],
  alreadyCancelledCodes: [BAUHAUS_ALREADY_CANCELLED],
});
