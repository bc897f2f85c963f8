import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { JsonlFile } from '../kit/jsonl.ts';
import { registerSettingsRoute } from '../kit/register-settings.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { childElements, escapeXml } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import { readSoapRequest, SoapClientError, soapAnswer, soapFault, soapServiceReplies } from '../soap-string/common.ts';

/**
 * eGoverneISS (Osasco/SP, "Eissnfe" WCF `NotaFiscalEletronica.svc`) below
 * `/municipal/egoverneiss/{producao|producaorestrita}`: SOAP 1.1, no client certificate, the taxpayer's access key
 * (`ChaveAutenticacao`, ≤ 36) inside each request. Facts from ACBr `eGoverneISS.Provider.pas` / `GravarXml.pas`
 * (edsontmarques/ACBr d4bb59b, b440fc5): SOAPAction `http://tempuri.org/INotaFiscalEletronicaServico/<op>`, the
 * `tem:request` wrapper and the data-contract namespaces; the `NotaFiscal` fields, their sizes and their order (a
 * WCF data contract: members in alphabetical order, optional ones may be left out, never reordered).
 *
 *   RTC_EmitirNFE    request/NotaFiscal_RTC → RTC_EmitirNFEResult {Erro, Mensagem, MensagemErro, NotaFiscalGerada}
 *   RTC_ConsultarNFE request/{ChaveAutenticacao, NumeroReciboUnico} → RTC_ConsultarNFEResult/NotasGeradas/
 *                    NotaFiscalConsultaDTO {CodigoAutenticidade, LinkNFE, Numero}
 *   Cancelar         request/{ChaveAutenticacao, Homologacao, NumeroNota} → CancelarResult {Erro, Mensagem}
 *
 * Refusals are `Erro` true with a message (the provider has no codes). Rules: known key (any non-empty key until a
 * list is set: `PUT /__sandbox/egoverneiss/settings {"keys": {"<key>": {"simplesNacional": false}}}`), `Homologacao`
 * matching the environment, the field order and required fields, formats (decimals with `.`, booleans, UF, CEP, CPF
 * or CNPJ), `SimplesNacional` as registered for the key, the ISS rate within 2–5 % (LC 116 art. 8 and 8-A) outside
 * the Simples, a receipt number used once per key. Structural errors of the envelope are SOAP faults (HTTP 500,
 * `s:Client`), as WCF answers them. Notes are kept in `<dataDir>/egoverneiss/notes.jsonl`.
 */

const NS = {
  tem: 'http://tempuri.org/',
  eis: 'http://schemas.datacontract.org/2004/07/Eissnfe.Negocio.WebServices.Mensagem',
  eis1: 'http://schemas.datacontract.org/2004/07/Eissnfe.Dominio.DataTransferObject.Prestador',
  eis2: 'http://schemas.datacontract.org/2004/07/Eissnfe.Dominio.DataTransferObject.Contribuinte',
};
const ACTION = 'http://tempuri.org/INotaFiscalEletronicaServico/';
const OPERATIONS = ['RTC_EmitirNFE', 'RTC_ConsultarNFE', 'Cancelar'];

/** `NotaFiscal` members in data-contract order; `true` = required (ACBr occurrence 1). */
const NOTA_FIELDS: [string, boolean][] = [
  ['Aliquota', true],
  ['Atividade', true],
  ['CEPPrestacaoServico', true],
  ['ChaveAutenticacao', true],
  ['CidadePrestacaoServico', true],
  ['CodObra', false],
  ['DataRecibo', false],
  ['EnderecoPrestacaoServico', true],
  ['EqptoRecibo', false],
  ['EstadoPrestacaoServico', true],
  ['Homologacao', true],
  ['InformacoesAdicionais', false],
  ['NotaSubstituida', false],
  ['NotificarTomadorPorEmail', true],
  ['NumeroCDC', false],
  ['NumeroCei', false],
  ['NumeroRecibo', false],
  ['SemIncidenciaISS', true],
  ['SimplesNacional', true],
  ['SubstituicaoTributaria', true],
  ['Tomador', false],
  ['TomadorEstrangeiro', true],
  ['Valor', true],
  ['ValorCSLL', false],
  ['ValorCOFINS', false],
  ['ValorDeducao', true],
  ['ValorINSS', false],
  ['ValorIR', false],
  ['ValorOutrosImpostos', false],
  ['ValorPisPasep', false],
  ['ValorRepasse', false],
];
const TOMADOR_FIELDS: [string, boolean][] = [
  ['CNPJ', false],
  ['CPF', false],
  ['DDD', false],
  ['Email', false],
  ['Endereco', true],
  ['InscricaoMunicipal', false],
  ['Nome', false],
  ['Telefone', false],
];
const ENDERECO_FIELDS: [string, boolean][] = [
  ['Bairro', true],
  ['CEP', true],
  ['Cidade', true],
  ['Complemento', false],
  ['Estado', true],
  ['Logradouro', true],
  ['Numero', true],
  ['Pais', true],
  ['TipoLogradouro', false],
];
const MAX: Record<string, number> = {
  Atividade: 9,
  ChaveAutenticacao: 36,
  CidadePrestacaoServico: 36,
  EnderecoPrestacaoServico: 36,
  InformacoesAdicionais: 2300,
  NumeroRecibo: 15,
  Nome: 120,
  Email: 120,
  Bairro: 50,
  Cidade: 50,
  Logradouro: 50,
  Numero: 9,
  Complemento: 30,
};
const DECIMAL = /^\d{1,13}(\.\d{1,4})?$/;
const BOOLEANS = ['SemIncidenciaISS', 'SimplesNacional', 'SubstituicaoTributaria', 'TomadorEstrangeiro'];

interface Note {
  env: string;
  key: string;
  recibo: string;
  numero: string;
  autenticador: string;
  cancelled: boolean;
}

class Refusal extends Error {}

/** Children of a data-contract element as a map, after checking namespace, order and required members. */
function members(el: Element, fields: [string, boolean][], ns: string, what: string): Map<string, Element> {
  const order = fields.map(([name]) => name);
  const out = new Map<string, Element>();
  let last = -1;
  for (const c of childElements(el)) {
    const index = order.indexOf(c.localName);
    if (index < 0 || c.namespaceURI !== ns) {
      throw new SoapClientError(`${what}: elemento inesperado ${c.localName} (${c.namespaceURI ?? 'sem namespace'})`);
    }
    if (index <= last) throw new SoapClientError(`${what}: ${c.localName} fora da ordem do contrato`);
    last = index;
    out.set(c.localName, c);
  }
  for (const [name, required] of fields) {
    if (required && !out.get(name)?.textContent?.trim() && name !== 'Endereco') {
      throw new Refusal(`${what}: o campo ${name} é obrigatório`);
    }
  }
  return out;
}

const textOf = (map: Map<string, Element>, name: string) => map.get(name)?.textContent?.trim() ?? '';

function checkSizes(map: Map<string, Element>): void {
  for (const [name, el] of map) {
    const max = MAX[name];
    if (max && (el.textContent ?? '').trim().length > max) throw new Refusal(`${name} excede ${max} caracteres`);
  }
}

function result(operation: string, body: string): SandboxReply {
  return soapAnswer(
    `<${operation}Response xmlns="${NS.tem}"><${operation}Result xmlns:a="${NS.eis}" ` +
      `xmlns:i="http://www.w3.org/2001/XMLSchema-instance">${body}</${operation}Result></${operation}Response>`,
  );
}
const refusal = (operation: string, message: string) =>
  result(
    operation,
    `<a:Erro>true</a:Erro><a:Mensagem i:nil="true"/><a:MensagemErro>${escapeXml(message)}</a:MensagemErro>`,
  );

export function createEGoverneIssService(deps: MunicipalSandboxDependencies): SandboxService {
  const notes: Note[] = [];
  const numbers = new Map<string, number>();
  let keys: Record<string, { simplesNacional?: boolean }> | null = null;
  const store = deps.dataDir ? new JsonlFile<Note>(join(deps.dataDir, 'egoverneiss', 'notes.jsonl')) : null;
  store?.replay(
    (note) => {
      const index = notes.findIndex((n) => n.env === note.env && n.numero === note.numero);
      if (index >= 0) notes[index] = note;
      else notes.push(note);
      numbers.set(note.env, Math.max(numbers.get(note.env) ?? 0, Number(note.numero)));
    },
    (m) => deps.logger.warn(m),
  );

  const link = (env: string, note: Note) => `/municipal/egoverneiss/${env}/nfe/${note.numero}?a=${note.autenticador}`;

  /** The key of a request, refused when unknown. */
  function keyOf(value: string): string {
    if (!value || value.length > 36) throw new Refusal('Chave de autenticação não informada ou inválida');
    if (keys && !keys[value]) throw new Refusal('Chave de autenticação inválida');
    return value;
  }

  function emitir(env: string, request: Element): SandboxReply {
    const nota = childElements(request).find((e) => e.localName === 'NotaFiscal_RTC' && e.namespaceURI === NS.eis);
    if (!nota) throw new SoapClientError('request: esperado eis:NotaFiscal_RTC');
    const fields = members(nota, NOTA_FIELDS, NS.eis1, 'NotaFiscal');
    checkSizes(fields);
    const key = keyOf(textOf(fields, 'ChaveAutenticacao'));
    const homologacao = textOf(fields, 'Homologacao');
    if (!['true', 'false'].includes(homologacao)) throw new Refusal('Homologacao deve ser true ou false');
    if ((homologacao === 'true') !== (env === 'producaorestrita')) {
      throw new Refusal('Homologacao não corresponde ao ambiente do serviço');
    }
    for (const name of BOOLEANS) {
      if (!['true', 'false'].includes(textOf(fields, name))) throw new Refusal(`${name} deve ser true ou false`);
    }
    for (const name of ['Aliquota', 'Valor', 'ValorDeducao', 'ValorCSLL', 'ValorINSS', 'ValorIR']) {
      if (fields.has(name) && !DECIMAL.test(textOf(fields, name))) throw new Refusal(`${name} inválido (use ponto)`);
    }
    if (Number(textOf(fields, 'Valor')) <= 0) throw new Refusal('Valor do serviço deve ser maior que zero');
    if (!/^\d{8}$/.test(textOf(fields, 'CEPPrestacaoServico'))) throw new Refusal('CEP da prestação inválido');
    if (!/^[A-Z]{2}$/.test(textOf(fields, 'EstadoPrestacaoServico'))) throw new Refusal('UF da prestação inválida');
    if (fields.has('DataRecibo') && !/^\d{4}-\d{2}-\d{2}$/.test(textOf(fields, 'DataRecibo'))) {
      throw new Refusal('DataRecibo inválida (aaaa-mm-dd)');
    }
    const recibo = textOf(fields, 'NumeroRecibo');
    if (recibo && !/^\d{1,15}$/.test(recibo)) throw new Refusal('NumeroRecibo inválido');
    const tomador = fields.get('Tomador');
    if (tomador) {
      const t = members(tomador, TOMADOR_FIELDS, NS.eis2, 'Tomador');
      checkSizes(t);
      const cnpj = textOf(t, 'CNPJ');
      const cpf = textOf(t, 'CPF');
      if ((cnpj && !/^\d{14}$/.test(cnpj)) || (cpf && !/^\d{11}$/.test(cpf)) || (!cnpj && !cpf) || (cnpj && cpf)) {
        throw new Refusal('Informe o CPF (11) ou o CNPJ (14) do tomador');
      }
      const endereco = t.get('Endereco');
      if (!endereco) throw new Refusal('Tomador: o campo Endereco é obrigatório');
      const e = members(endereco, ENDERECO_FIELDS, NS.eis2, 'Endereco');
      checkSizes(e);
      if (!/^\d{8}$/.test(textOf(e, 'CEP')) || !/^[A-Z]{2}$/.test(textOf(e, 'Estado'))) {
        throw new Refusal('Endereço do tomador: CEP ou UF inválido');
      }
    }
    const simples = textOf(fields, 'SimplesNacional') === 'true';
    const registered = keys?.[key]?.simplesNacional;
    if (registered !== undefined && registered !== simples) {
      throw new Refusal(
        registered ? 'Prestador optante do Simples Nacional' : 'Prestador não é optante do Simples Nacional',
      );
    }
    const aliquota = Number(textOf(fields, 'Aliquota'));
    if (!simples && (aliquota < 2 || aliquota > 5)) throw new Refusal('Alíquota do ISS deve estar entre 2% e 5%');
    const mine = notes.filter((n) => n.env === env && n.key === key);
    if (recibo && mine.some((n) => n.recibo === recibo)) throw new Refusal(`Recibo ${recibo} já utilizado`);
    const next = (numbers.get(env) ?? 0) + 1;
    numbers.set(env, next);
    const note: Note = {
      env,
      key,
      recibo,
      numero: String(next),
      autenticador: createHash('sha256').update(`${env}|${key}|${next}`).digest('hex').slice(0, 16).toUpperCase(),
      cancelled: false,
    };
    notes.push(note);
    store?.append(note);
    deps.logger.info(`sandbox eGoverneISS: NFS-e ${note.numero} issued for receipt ${recibo}`);
    return result(
      'RTC_EmitirNFE',
      '<a:Erro>false</a:Erro><a:Mensagem>Nota fiscal gerada com sucesso</a:Mensagem><a:MensagemErro i:nil="true"/>' +
        `<a:NotaFiscalGerada><a:Autenticador>${note.autenticador}</a:Autenticador>` +
        `<a:Link>${escapeXml(link(env, note))}</a:Link><a:Numero>${note.numero}</a:Numero></a:NotaFiscalGerada>`,
    );
  }

  function parameters(request: Element, names: string[]): Map<string, Element> {
    return members(
      request,
      names.map((n) => [n, true]),
      NS.eis,
      'request',
    );
  }

  function consultar(env: string, request: Element): SandboxReply {
    const p = parameters(request, ['ChaveAutenticacao', 'NumeroReciboUnico']);
    const key = keyOf(textOf(p, 'ChaveAutenticacao'));
    const recibo = textOf(p, 'NumeroReciboUnico');
    const note = notes.find((n) => n.env === env && n.key === key && n.recibo === recibo);
    if (!note) throw new Refusal(`Nota fiscal não encontrada para o recibo ${recibo}`);
    return result(
      'RTC_ConsultarNFE',
      '<a:Erro>false</a:Erro><a:Mensagem i:nil="true"/><a:MensagemErro i:nil="true"/><a:NotasGeradas>' +
        `<a:NotaFiscalConsultaDTO><a:CodigoAutenticidade>${note.autenticador}</a:CodigoAutenticidade>` +
        `<a:LinkNFE>${escapeXml(link(env, note))}</a:LinkNFE><a:MensagemErro i:nil="true"/>` +
        `<a:Numero>${note.numero}</a:Numero><a:Situacao>${note.cancelled ? 'Cancelada' : 'Normal'}</a:Situacao>` +
        '</a:NotaFiscalConsultaDTO></a:NotasGeradas>',
    );
  }

  function cancelar(env: string, request: Element): SandboxReply {
    const p = parameters(request, ['ChaveAutenticacao', 'Homologacao', 'NumeroNota']);
    const key = keyOf(textOf(p, 'ChaveAutenticacao'));
    if ((textOf(p, 'Homologacao') === 'true') !== (env === 'producaorestrita')) {
      throw new Refusal('Homologacao não corresponde ao ambiente do serviço');
    }
    const note = notes.find((n) => n.env === env && n.key === key && n.numero === textOf(p, 'NumeroNota'));
    if (!note) throw new Refusal('Nota fiscal não encontrada');
    if (note.cancelled) throw new Refusal('Nota fiscal já está cancelada');
    note.cancelled = true;
    store?.append(note);
    deps.logger.info(`sandbox eGoverneISS: NFS-e ${note.numero} cancelled`);
    return result(
      'Cancelar',
      '<a:Erro>false</a:Erro><a:Mensagem>Nota fiscal cancelada com sucesso</a:Mensagem><a:MensagemErro i:nil="true"/>',
    );
  }

  function handle(req: SandboxRequest): SandboxReply {
    const env = req.params.ambiente ?? 'producaorestrita';
    let operation = '';
    try {
      const soap = readSoapRequest(req.body);
      operation = soap.operation;
      if (!OPERATIONS.includes(operation) || soap.namespace !== NS.tem) {
        throw new SoapClientError(`Operação desconhecida: ${operation} (${soap.namespace ?? 'sem namespace'})`);
      }
      const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
      if (action !== `${ACTION}${operation}`) throw new SoapClientError(`SOAPAction inválida: ${action}`);
      const request = childElements(soap.element).find((e) => e.localName === 'request' && e.namespaceURI === NS.tem);
      if (!request) throw new SoapClientError(`${operation}: parâmetro tem:request ausente`);
      if (operation === 'RTC_EmitirNFE') return emitir(env, request);
      if (operation === 'RTC_ConsultarNFE') return consultar(env, request);
      return cancelar(env, request);
    } catch (err) {
      if (err instanceof Refusal) return refusal(operation, err.message);
      if (err instanceof SoapClientError) return soapFault(500, 'soap:Client', err.message);
      throw err;
    }
  }

  return {
    family: 'egoverneiss',
    name: 'eGoverneISS',
    mount: '/municipal/egoverneiss/:ambiente(producao|producaorestrita)',
    routes: [{ method: 'POST', path: '/', name: 'egoverneiss', handler: handle }],
    ...soapServiceReplies(),
    admin: [
      registerSettingsRoute<NonNullable<typeof keys>>({
        slug: 'egoverneiss',
        field: 'keys',
        set: (given) => {
          keys = given;
        },
      }),
    ],
  };
}

export const eGoverneIssSandbox: MunicipalSandbox = {
  engine: 'own-layout:egoverneiss',
  slug: 'egoverneiss',
  create: createEGoverneIssService,
};
