import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import { JsonlFile } from '../kit/jsonl.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { childElements, escapeXml, parseDom, XMLDSIG_NS } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import {
  readSoapRequest,
  SoapClientError,
  soapAnswer,
  soapFault,
  stringParameter,
  verifyDocumentSignature,
  soapServiceReplies,
} from '../soap-string/common.ts';

/**
 * Equiplano e-SNFS (`…/enfsws/services/Enfs`, Axis2) below `/municipal/equiplano/{producao|producaorestrita}`:
 * SOAP 1.1 in `http://services.enfsws.es`, SOAPAction `urn:<op>`, parameters `nrVersaoXml` (1) and `xml` (the
 * message as an escaped string), the answer as an escaped string in `return`. The client certificate is required on
 * TLS and its CNPJ must be the prestador's; every message is signed as a whole document (one Reference `URI=""`,
 * the Signature the last child of the root) and verified. Facts: ACBr `Equiplano.Provider.pas` / `GravarXml.pas`
 * and Equiplano's sample lot (see src/engines/own-layout/equiplano.ts); there is no public XSD, so the sandbox checks
 * the documented structure: members, order, required ones ("obrigatório"), value lists and formats.
 *
 *   esRecepcionarLoteRps      enviarLoteRpsEnvio → esEnviarLoteRpsResposta/protocolo {nrLote, dtRecebimento,
 *                             nrProtocolo}; the lot is processed at once (its rules give stLote 3 or 2 with errors)
 *   esConsultarSituacaoLoteRps by nrProtocolo (or nrLoteRps) → {nrLoteRps, stLote}
 *   esConsultarLoteRps        → listaNfse/nfse or the lot's errors
 *   esConsultarNfsePorRps     rps {nrRps, nrEmissorRps} → nfse (with `cancelamento` once cancelled)
 *   esConsultarNfse           nrNfse → listaNfse/nfse
 *   esCancelarNfse            nrNfse, dsMotivoCancelamento → {sucesso, dtCancelamento}
 *
 * Errors are `mensagemRetorno/listaErros/erro/{cdMensagem, dsMensagem}`. The codes are this sandbox's (Equiplano's
 * table is not in the public sources): 100 structure, 101 signature, 102 certificate not the prestador's, 104 lot
 * number already received, 105 protocol unknown, 106 NFS-e not found, 107 NFS-e already cancelled, 108 RPS not
 * found, 109 reason required; processing: 201 ISS value ≠ base × rate / 100, 202 RPS already converted, 203 totals,
 * 204 document type. Lots and notes are kept in `<dataDir>/equiplano/*.jsonl`.
 */

const ES_NS = 'http://www.equiplano.com.br/esnfs';
const SERVICE_NS = 'http://services.enfsws.es';
const OPERATIONS: Record<string, [request: string, answer: string]> = {
  esRecepcionarLoteRps: ['enviarLoteRpsEnvio', 'esEnviarLoteRpsResposta'],
  esConsultarSituacaoLoteRps: ['esConsultarSituacaoLoteRpsEnvio', 'esConsultarSituacaoLoteRpsResposta'],
  esConsultarLoteRps: ['esConsultarLoteRpsEnvio', 'esConsultarLoteRpsResposta'],
  esConsultarNfsePorRps: ['esConsultarNfsePorRpsEnvio', 'esConsultarNfsePorRpsResposta'],
  esConsultarNfse: ['esConsultarNfseEnvio', 'esConsultarNfseResposta'],
  esCancelarNfse: ['esCancelarNfseEnvio', 'esCancelarNfseResposta'],
};

/** A member of the layout: name, required, its format (a pattern or a value list) or its own members. */
type Member = [name: string, required: boolean, format?: RegExp | Member[], repeats?: boolean];
const D = /^\d+$/;
const MONEY = /^\d{1,13}(\.\d{1,2})?$/;
const TEXT = /^[\s\S]{1,1024}$/;
const DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;
const QUERY_PRESTADOR: Member = [
  'prestador',
  true,
  [
    ['nrInscricaoMunicipal', false, D],
    ['cnpj', true, /^\d{14}$/],
    ['idEntidade', true, D],
  ],
];
const RPS: Member[] = [
  ['nrRps', true, /^\d{1,15}$/],
  ['nrEmissorRps', true, /^\d$/],
  ['dtEmissaoRps', true, DATETIME],
  ['stRps', true, /^[123]$/],
  ['tpTributacao', true, /^[1-4]$/],
  ['nrCidadeIbgeServico', false, /^\d{7}$/],
  ['isIssRetido', true, /^[12]$/],
  [
    'tomador',
    false,
    [
      [
        'documento',
        true,
        [
          ['nrDocumento', true, /^\d{11}$|^\d{14}$/],
          ['tpDocumento', true, /^[123]$/],
          ['dsDocumentoEstrangeiro', false, /^[\s\S]{0,20}$/],
        ],
      ],
      ['nmTomador', true, /^[\s\S]{1,80}$/],
      ['dsEmail', false, /^[\s\S]{0,80}$/],
      ['nrInscricaoEstadual', false, /^[\s\S]{0,20}$/],
      ['nrInscricaoMunicipal', false, /^[\s\S]{0,20}$/],
      ['dsEndereco', true, /^[\s\S]{1,40}$/],
      ['nrEndereco', false, /^[\s\S]{0,10}$/],
      ['dsComplemento', false, /^[\s\S]{0,60}$/],
      ['nmBairro', false, /^[\s\S]{0,25}$/],
      ['nrCidadeIbge', false, /^(\d{7})?$/],
      ['nmUf', false, /^([A-Z]{2})?$/],
      ['nmCidadeEstrangeira', false, /^[\s\S]{0,115}$/],
      ['nmPais', true, /^[\s\S]{1,40}$/],
      ['nrCep', false, /^(\d{8})?$/],
      ['nrTelefone', false, /^[\s\S]{0,20}$/],
    ],
  ],
  [
    'listaServicos',
    true,
    [
      [
        'servico',
        true,
        [
          ['nrServicoItem', true, /^\d{1,2}$/],
          ['nrServicoSubItem', true, /^\d{1,2}$/],
          ['vlServico', true, MONEY],
          ['vlAliquota', true, MONEY],
          [
            'deducao',
            false,
            [
              ['vlDeducao', true, MONEY],
              ['dsJustificativaDeducao', true, /^[\s\S]{1,255}$/],
            ],
          ],
          ['vlBaseCalculo', true, MONEY],
          ['vlIssServico', true, MONEY],
          ['dsDiscriminacaoServico', true, TEXT],
        ],
        true,
      ],
    ],
  ],
  ['vlTotalRps', true, MONEY],
  ['vlLiquidoRps', true, MONEY],
  [
    'retencoes',
    false,
    ['vlCofins', 'vlCsll', 'vlInss', 'vlIrrf', 'vlPis', 'vlIss']
      .map((n): Member => [n, false, MONEY])
      .concat(['Cofins', 'Csll', 'Inss', 'Irrf', 'Pis'].map((n): Member => [`vlAliquota${n}`, false, MONEY])),
  ],
  ['vlDesconto', false, MONEY],
  ['dsImpostos', false, /^[\s\S]{0,500}$/],
];
const LOTE: Member[] = [
  ['nrLote', true, /^\d{1,15}$/],
  ['qtRps', true, D],
  ['nrVersaoXml', true, /^1$/],
  [
    'prestador',
    true,
    [
      ['nrCnpj', true, /^\d{14}$/],
      ['nrInscricaoMunicipal', true, D],
      ['isOptanteSimplesNacional', true, /^[12]$/],
      ['idEntidade', true, D],
    ],
  ],
  ['listaRps', true, [['rps', true, RPS, true]]],
];
const REQUESTS: Record<string, Member[]> = {
  enviarLoteRpsEnvio: [['lote', true, LOTE]],
  esConsultarSituacaoLoteRpsEnvio: [QUERY_PRESTADOR, ['nrProtocolo', false, D], ['nrLoteRps', false, D]],
  esConsultarLoteRpsEnvio: [QUERY_PRESTADOR, ['nrProtocolo', false, D], ['nrLoteRps', false, D]],
  esConsultarNfsePorRpsEnvio: [
    [
      'rps',
      true,
      [
        ['nrRps', true, D],
        ['nrEmissorRps', true, D],
      ],
    ],
    QUERY_PRESTADOR,
  ],
  esConsultarNfseEnvio: [QUERY_PRESTADOR, ['nrNfse', true, D]],
  esCancelarNfseEnvio: [QUERY_PRESTADOR, ['nrNfse', true, D], ['dsMotivoCancelamento', false, /^[\s\S]{0,255}$/]],
};

class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Checks an element's members (unqualified, in order, required ones present, formats); throws a 100 refusal. */
function checkMembers(el: Element, members: Member[], path: string): void {
  const names = members.map(([name]) => name);
  let last = -1;
  const seen = new Set<string>();
  for (const c of childElements(el)) {
    if (c.namespaceURI === XMLDSIG_NS && c.localName === 'Signature') continue;
    const index = names.indexOf(c.localName);
    const where = `${path}/${c.localName}`;
    if (index < 0 || c.namespaceURI) throw new Refusal('100', `Elemento não previsto no leiaute: ${where}`);
    const member = members[index]!;
    if (index < last || (index === last && !member[3])) throw new Refusal('100', `Elemento fora de ordem: ${where}`);
    last = index;
    seen.add(c.localName);
    const format = member[2];
    if (Array.isArray(format)) checkMembers(c, format, where);
    else if (format && !format.test((c.textContent ?? '').trim())) {
      throw new Refusal('100', `Valor inválido em ${where}: "${(c.textContent ?? '').trim().slice(0, 40)}"`);
    }
  }
  for (const [name, required] of members) {
    if (required && !seen.has(name)) throw new Refusal('100', `Elemento obrigatório ausente: ${path}/${name}`);
  }
}

const t = (el: Element | null | undefined, name: string) =>
  (el
    ? childElements(el)
        .find((c) => c.localName === name)
        ?.textContent?.trim()
    : undefined) ?? '';
const at = (el: Element | null | undefined, name: string) =>
  el ? (childElements(el).find((c) => c.localName === name) ?? null) : null;

interface Lot {
  env: string;
  cnpj: string;
  nrLote: string;
  protocolo: string;
  receivedAt: string;
  errors: [string, string][];
  numero: string | null;
}
interface Note {
  env: string;
  cnpj: string;
  numero: string;
  nrRps: string;
  nrEmissorRps: string;
  codigo: string;
  emitidaEm: string;
  cancelamento: { em: string; motivo: string } | null;
}

const local = (at: Date) => new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 19);
const near = (a: number, b: number) => Math.abs(a - b) <= 0.011;

export function createEquiplanoService(deps: MunicipalSandboxDependencies): SandboxService {
  const lots: Lot[] = [];
  const notes: Note[] = [];
  const counters = new Map<string, number>();
  const dir = deps.dataDir ? join(deps.dataDir, 'equiplano') : null;
  const lotStore = dir ? new JsonlFile<Lot>(join(dir, 'lots.jsonl')) : null;
  const noteStore = dir ? new JsonlFile<Note>(join(dir, 'notes.jsonl')) : null;
  const bump = (key: string, value: number) => counters.set(key, Math.max(counters.get(key) ?? 0, value));
  lotStore?.replay(
    (lot) => {
      lots.push(lot);
      bump(`p${lot.env}`, Number(lot.protocolo));
    },
    (m) => deps.logger.warn(m),
  );
  noteStore?.replay(
    (note) => {
      const index = notes.findIndex((n) => n.env === note.env && n.numero === note.numero);
      if (index >= 0) notes[index] = note;
      else notes.push(note);
      bump(`n${note.env}`, Number(note.numero));
    },
    (m) => deps.logger.warn(m),
  );
  const next = (key: string) => {
    const value = (counters.get(key) ?? 0) + 1;
    counters.set(key, value);
    return String(value);
  };

  const nfseXml = (n: Note) =>
    `<nfse><nrNfse>${n.numero}</nrNfse><cdAutenticacao>${n.codigo}</cdAutenticacao>` +
    `<dtEmissaoNfs>${n.emitidaEm}</dtEmissaoNfs><nrRps>${n.nrRps}</nrRps><nrEmissorRps>${n.nrEmissorRps}</nrEmissorRps>` +
    (n.cancelamento
      ? `<cancelamento><dtCancelamento>${n.cancelamento.em}</dtCancelamento>` +
        `<dsCancelamento>${escapeXml(n.cancelamento.motivo)}</dsCancelamento></cancelamento>`
      : '') +
    '</nfse>';
  const errorsXml = (errors: [string, string][]) =>
    `<mensagemRetorno><listaErros>${errors
      .map(([c, d]) => `<erro><cdMensagem>${c}</cdMensagem><dsMensagem>${escapeXml(d)}</dsMensagem></erro>`)
      .join('')}</listaErros></mensagemRetorno>`;

  /** Processing of a received lot (its one or more RPS): notes, or the lot's errors. */
  function processLot(env: string, cnpj: string, lote: Element): { errors: [string, string][]; numero: string | null } {
    const rpsList = childElements(at(lote, 'listaRps')!);
    if (Number(t(lote, 'qtRps')) !== rpsList.length)
      return { errors: [['203', 'qtRps difere do número de RPS']], numero: null };
    const errors: [string, string][] = [];
    for (const rps of rpsList) {
      const servicos = childElements(at(rps, 'listaServicos')!);
      let total = 0;
      for (const s of servicos) {
        total += Number(t(s, 'vlServico'));
        const expected = (Number(t(s, 'vlBaseCalculo')) * Number(t(s, 'vlAliquota'))) / 100;
        if (!near(expected, Number(t(s, 'vlIssServico')))) {
          errors.push([
            '201',
            `vlIssServico ${t(s, 'vlIssServico')} difere de base × alíquota / 100 (${expected.toFixed(2)})`,
          ]);
        }
      }
      if (!near(total, Number(t(rps, 'vlTotalRps')))) errors.push(['203', 'vlTotalRps difere da soma dos serviços']);
      if (Number(t(rps, 'vlLiquidoRps')) > Number(t(rps, 'vlTotalRps')) + 0.001) {
        errors.push(['203', 'vlLiquidoRps maior que vlTotalRps']);
      }
      const documento = at(at(rps, 'tomador'), 'documento');
      if (documento && t(documento, 'nrDocumento').length !== (t(documento, 'tpDocumento') === '2' ? 14 : 11)) {
        errors.push(['204', 'tpDocumento não corresponde ao documento do tomador']);
      }
      const converted = notes.find(
        (n) =>
          n.env === env && n.cnpj === cnpj && n.nrRps === t(rps, 'nrRps') && n.nrEmissorRps === t(rps, 'nrEmissorRps'),
      );
      if (converted) errors.push(['202', `RPS ${t(rps, 'nrRps')} já convertido na NFS-e ${converted.numero}`]);
    }
    if (errors.length > 0) return { errors, numero: null };
    let numero: string | null = null;
    for (const rps of rpsList) {
      numero = next(`n${env}`);
      const note: Note = {
        env,
        cnpj,
        numero,
        nrRps: t(rps, 'nrRps'),
        nrEmissorRps: t(rps, 'nrEmissorRps'),
        codigo: createHash('sha256').update(`${env}|${cnpj}|${numero}`).digest('hex').slice(0, 12).toUpperCase(),
        emitidaEm: local(deps.now()),
        cancelamento: null,
      };
      notes.push(note);
      noteStore?.append(note);
      deps.logger.info(`sandbox Equiplano: NFS-e ${numero} issued for RPS ${note.nrRps}`);
    }
    return { errors: [], numero };
  }

  function operate(env: string, operation: string, root: Element, cnpj: string): string {
    if (operation === 'esRecepcionarLoteRps') {
      const lote = at(root, 'lote')!;
      const nrLote = t(lote, 'nrLote');
      if (lots.some((l) => l.env === env && l.cnpj === cnpj && l.nrLote === nrLote)) {
        throw new Refusal('104', `Lote ${nrLote} já recebido`);
      }
      const processed = processLot(env, cnpj, lote);
      const lot: Lot = {
        env,
        cnpj,
        nrLote,
        protocolo: next(`p${env}`),
        receivedAt: local(deps.now()),
        ...processed,
      };
      lots.push(lot);
      lotStore?.append(lot);
      return (
        `<protocolo><nrLote>${nrLote}</nrLote><dtRecebimento>${lot.receivedAt}</dtRecebimento>` +
        `<nrProtocolo>${lot.protocolo}</nrProtocolo></protocolo>`
      );
    }
    const mine = (n: { env: string; cnpj: string }) => n.env === env && n.cnpj === cnpj;
    const lotOf = () => {
      const lot = lots.find(
        (l) =>
          mine(l) &&
          (l.protocolo === t(root, 'nrProtocolo') || (!t(root, 'nrProtocolo') && l.nrLote === t(root, 'nrLoteRps'))),
      );
      if (!lot) throw new Refusal('105', 'Protocolo ou lote não encontrado');
      return lot;
    };
    if (operation === 'esConsultarSituacaoLoteRps') {
      const lot = lotOf();
      return `<nrLoteRps>${lot.nrLote}</nrLoteRps><stLote>${lot.errors.length > 0 ? 2 : 3}</stLote>`;
    }
    if (operation === 'esConsultarLoteRps') {
      const lot = lotOf();
      if (lot.errors.length > 0) return errorsXml(lot.errors);
      const note = notes.find((n) => mine(n) && n.numero === lot.numero)!;
      return `<listaNfse>${nfseXml(note)}</listaNfse>`;
    }
    if (operation === 'esConsultarNfsePorRps') {
      const rps = at(root, 'rps');
      const note = notes.find(
        (n) => mine(n) && n.nrRps === t(rps, 'nrRps') && n.nrEmissorRps === t(rps, 'nrEmissorRps'),
      );
      if (!note) throw new Refusal('108', 'RPS não encontrado');
      return nfseXml(note);
    }
    const note = notes.find((n) => mine(n) && n.numero === t(root, 'nrNfse'));
    if (!note) throw new Refusal('106', 'NFS-e não encontrada');
    if (operation === 'esConsultarNfse') return `<listaNfse>${nfseXml(note)}</listaNfse>`;
    if (note.cancelamento) throw new Refusal('107', 'NFS-e já cancelada');
    const motivo = t(root, 'dsMotivoCancelamento');
    if (!motivo) throw new Refusal('109', 'Motivo do cancelamento obrigatório');
    note.cancelamento = { em: local(deps.now()), motivo };
    noteStore?.append(note);
    deps.logger.info(`sandbox Equiplano: NFS-e ${note.numero} cancelled`);
    return `<sucesso>true</sucesso><dtCancelamento>${note.cancelamento.em}</dtCancelamento>`;
  }

  function handle(req: SandboxRequest): SandboxReply {
    const env = req.params.ambiente ?? 'producaorestrita';
    let soap: ReturnType<typeof readSoapRequest>;
    let xml: string;
    try {
      soap = readSoapRequest(req.body);
      if (!OPERATIONS[soap.operation] || soap.namespace !== SERVICE_NS) {
        throw new SoapClientError(`Operação desconhecida: ${soap.operation}`);
      }
      const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
      if (action !== `urn:${soap.operation}`) throw new SoapClientError(`SOAPAction inválida: ${action}`);
      if (stringParameter(soap.element, 'nrVersaoXml', SERVICE_NS) !== '1') {
        throw new SoapClientError('nrVersaoXml deve ser 1');
      }
      xml = stringParameter(soap.element, 'xml', SERVICE_NS);
    } catch (err) {
      if (err instanceof SoapClientError) return soapFault(500, 'soap:Client', err.message);
      throw err;
    }
    const [requestRoot, answerRoot] = OPERATIONS[soap.operation]!;
    const reply = (content: string) =>
      soapAnswer(
        `<ns:${soap.operation}Response xmlns:ns="${SERVICE_NS}"><ns:return>` +
          escapeXml(`<es:${answerRoot} xmlns:es="${ES_NS}">${content}</es:${answerRoot}>`) +
          `</ns:return></ns:${soap.operation}Response>`,
      );
    try {
      let root: Element;
      try {
        root = parseDom(xml).documentElement;
      } catch (err) {
        throw new Refusal('100', `XML mal formado: ${(err as Error).message}`);
      }
      if (root?.localName !== requestRoot || root.namespaceURI !== ES_NS) {
        throw new Refusal('100', `Esperado es:${requestRoot} (${ES_NS})`);
      }
      const last = childElements(root).at(-1);
      if (last?.localName !== 'Signature' || last.namespaceURI !== XMLDSIG_NS) {
        throw new Refusal('101', 'A assinatura deve ser o último elemento da mensagem');
      }
      const signature = verifyDocumentSignature(xml, root);
      if (!signature.ok) throw new Refusal('101', `Assinatura inválida: ${signature.detail}`);
      checkMembers(root, REQUESTS[requestRoot]!, requestRoot);
      const prestador = at(requestRoot === 'enviarLoteRpsEnvio' ? at(root, 'lote') : root, 'prestador');
      const cnpj = t(prestador, 'nrCnpj') || t(prestador, 'cnpj');
      const transmitter = req.clientCertificate ? readIcpBrasilIdentity(req.clientCertificate.raw).cnpj : null;
      if (cnpj !== transmitter || signature.identity.cnpj !== transmitter) {
        throw new Refusal('102', 'Certificado digital não pertence ao prestador informado');
      }
      return reply(operate(env, soap.operation, root, cnpj));
    } catch (err) {
      if (err instanceof Refusal) return reply(errorsXml([[err.code, err.message]]));
      throw err;
    }
  }

  return {
    family: 'equiplano',
    name: 'Equiplano',
    mount: '/municipal/equiplano/:ambiente(producao|producaorestrita)',
    routes: [{ method: 'POST', path: '/', name: 'equiplano', handler: handle }],
    before: (req) =>
      req.clientCertificate ? null : soapFault(403, 'soap:Client', 'Certificado digital do cliente obrigatório.'),
    ...soapServiceReplies('Serviço não encontrado'),
  };
}

export const equiplanoSandbox: MunicipalSandbox = {
  engine: 'own-layout:equiplano',
  slug: 'equiplano',
  create: createEquiplanoService,
};
