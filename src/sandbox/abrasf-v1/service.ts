import { randomInt } from 'node:crypto';
import { join } from 'node:path';
import { XMLSerializer } from '@xmldom/xmldom';
import { type SchemaName, validateXml } from '../../xml/xsd.ts';
import { readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { readSoap11Call } from '../kit/soap11.ts';
import { at, child, childElements, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import { type SandboxSigner, signEnveloped, verifyEnvelopedSignature } from '../kit/xml-signature.ts';
import type { MunicipalSandboxDependencies } from '../municipal.ts';
import { brasiliaDateTime } from '../sefin/time.ts';
import { type Ambiente, GinfesStore, type Lote, type Mensagem, type Note, rpsKeyOf } from '../ginfes/store.ts';

/**
 * The ABRASF 1.00 sandbox (family `abrasf-v1`), one service per provider profile: SOAP 1.1, each operation element in
 * the profile's namespace with its string parameters (qualified WCF parameters, unqualified JAX-WS ones, or inside an
 * `<{Op}Request>`; a cabeçalho parameter where the provider has one), the answer an escaped ABRASF message in
 * `<Op>Result`, `return` or `outputXML`, as the profile says.
 *
 * - the SOAPAction must be the operation's; every message is validated with the provider's XSD (E160 when outside it);
 *   the sandbox checks its own answers against the provider's answer schemas where they are published.
 * - authentication as the profile says (the kit's own verifier): the RPS on InfRps, the lote on LoteRps, the
 *   cancellation on InfPedidoCancelamento, consultations whole (`URI=""`); a missing or broken signature is E1; the
 *   TLS certificate (when the provider takes one) and the signer must be the prestador's (E157). A provider that
 *   authenticates nobody (SpeedGov) still checks the municipality's register of prestadores (E43).
 * - RecepcionarLoteRps: E10 for an RPS already received; otherwise a Protocolo and the lote in Situacao 2 (não
 *   processado) for `holdMs`, then processed: 3 (E16, E18, E70, E159) or 4 with the NFS-e (signed by the sandbox).
 * - ConsultarSituacaoLoteRps (E86 unknown protocol), ConsultarLoteRps (E92 while not processed; the lote's messages
 *   when 3), ConsultarNfsePorRps (E92, E4), ConsultarNfse (by NumeroNfse or all of the prestador; E78), CancelarNfse
 *   where the profile offers it (E78, E79 already cancelled; the confirmation in the provider's shape).
 * - a lote carries one RPS here (what the engine sends); more is refused with E160 and a note saying so.
 * - the kit's fault injection: RecepcionarLoteRps is the write.
 */
export type V1Operation =
  | 'recepcionar'
  | 'consultarSituacao'
  | 'consultarLote'
  | 'consultarPorRps'
  | 'consultarNfse'
  | 'cancelar';

export interface AbrasfV1SandboxProfile {
  engine: string;
  slug: string;
  name: string;
  schema: SchemaName;
  /** the namespace of the ABRASF types (the RPS, the NFS-e, ListaMensagemRetorno) */
  dataNamespace: string;
  /** the namespace of an answer's root and of its own elements (default: `dataNamespace`) */
  answerNamespace?: (answerRoot: string) => string;
  soap: {
    namespace: string;
    /** the message's parameter (and the cabeçalho's) in `namespace` (WCF) or unqualified (JAX-WS) */
    qualifiedParameters: boolean;
    /** a cabeçalho parameter before the message's, and what it must hold */
    header?: { parameter: string; valid(cabecalho: string): boolean };
    /** the answer string's element: `<Op>Result` (WCF) or `return` (JAX-WS) */
    result: 'Result' | 'return' | 'outputXML';
    /** the parameters inside an unqualified `<{Op}Request>` in the operation element (MetropolisWeb) */
    requestWrapper?: boolean;
  };
  /** by operation element: the logical operation, its SOAPAction and its parameter */
  operations: Record<string, { operation: V1Operation; soapAction: string; parameter: string }>;
  /** the published schema of an answer, if any (Salvador's nfse.xsd holds them all): checked before it leaves */
  answerSchema?: (answerRoot: string) => SchemaName | null;
  /**
   * Where the provider's types differ from the official ones (ISSNet 1.00): the prestador's CNPJ in `CpfCnpj{Cnpj}`
   * (Prestador, LoteRps), the service's municipality element, ListaMensagemRetorno in the answer's own namespace, and
   * ConsultarLoteRps's messages as tcMensagemRetornoLote{IdentificacaoRps, Codigo, Mensagem}.
   */
  types?: {
    prestadorCpfCnpj?: boolean;
    servicoMunicipio?: string;
    messagesInAnswerNamespace?: boolean;
    loteMessagesWithRps?: boolean;
  };
  /** request roots that differ from the official ones (Publica's ConsultarNfseFaixaEnvio) */
  requestRoots?: Partial<Record<V1Operation, string>>;
  /** answer roots that differ from the official ones (Publica answers ConsultarNfsePorRps with ConsultarNfseResposta) */
  answerRoots?: Partial<Record<V1Operation, string>>;
  /**
   * The NFS-e the sandbox issues: the Id attribute's name of InfNfse, Competencia as dateTime (1.00), date or
   * gYearMonth (Publica); the number zero-padded to `numberDigits`; `unsigned` where the schema's tcNfse holds no
   * Signature (Publica).
   */
  note: {
    idAttribute: 'Id' | 'id';
    /** `yyyyMM`: ISSNet's tsCompetencia (a number of six digits) */
    competencia: 'dateTime' | 'date' | 'gYearMonth' | 'yyyyMM';
    /** DataEmissaoRps as a date (1.00) or a dateTime (ISSNet) */
    dataEmissaoRps?: 'date' | 'dateTime';
    numberDigits?: number;
    unsigned?: boolean;
    /**
     * The cancellation's confirmation: `official` (ABRASF 1.00 tcConfirmacaoCancelamento{Pedido,
     * DataHoraCancelamento}, signed by the provider) or `inf` (GINFES-style InfConfirmacaoCancelamento{Sucesso,
     * DataHora}, SpeedGov's types).
     */
    cancellation?: 'official' | 'inf';
    /** the `inf` confirmation signed by the provider (ISSNet's tcCancelamentoNfse requires the Signature) */
    signedConfirmation?: boolean;
    /** the date element of the official confirmation (WebISS's types: `DataHora`) */
    confirmationDate?: 'DataHoraCancelamento' | 'DataHora';
  };
  /** what the provider authenticates: the TLS client certificate and which XML signatures */
  clientCertificate: boolean;
  signature: { rps: boolean; lote: boolean; queries: boolean; cancel: boolean };
}

const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const ROOTS: Record<V1Operation, { request: string; answer: string }> = {
  recepcionar: { request: 'EnviarLoteRpsEnvio', answer: 'EnviarLoteRpsResposta' },
  consultarSituacao: { request: 'ConsultarSituacaoLoteRpsEnvio', answer: 'ConsultarSituacaoLoteRpsResposta' },
  consultarLote: { request: 'ConsultarLoteRpsEnvio', answer: 'ConsultarLoteRpsResposta' },
  consultarPorRps: { request: 'ConsultarNfseRpsEnvio', answer: 'ConsultarNfseRpsResposta' },
  consultarNfse: { request: 'ConsultarNfseEnvio', answer: 'ConsultarNfseResposta' },
  cancelar: { request: 'CancelarNfseEnvio', answer: 'CancelarNfseResposta' },
};
const NOTE_SIGNATURE = {
  signatureAlgorithm: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
  digestAlgorithm: 'http://www.w3.org/2000/09/xmldsig#sha1',
  canonicalizationAlgorithm: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
};
const UF: Record<string, string> = {
  '15': 'PA',
  '21': 'MA',
  '22': 'PI',
  '23': 'CE',
  '24': 'RN',
  '26': 'PE',
  '29': 'BA',
  '31': 'MG',
  '33': 'RJ',
  '35': 'SP',
  '41': 'PR',
  '42': 'SC',
  '43': 'RS',
  '50': 'MS',
};

export interface AbrasfV1SandboxOptions extends MunicipalSandboxDependencies {
  /** how long a lote stays "não processado" before it is processed (default 1 s) */
  holdMs?: number;
  /**
   * The municipality's register of prestadores (CNPJ, inscrição municipal), for providers that authenticate nobody
   * (SpeedGov): a lote of an unregistered prestador is refused with E43. Default: every prestador with an inscrição.
   */
  registered?: (cnpj: string, inscricaoMunicipal: string) => boolean;
}

class Refusal extends Error {
  /** `rps`: the IdentificacaoRps (inner XML) the messages concern, for tcMensagemRetornoLote (ISSNet) */
  constructor(
    readonly mensagens: Mensagem[],
    readonly rps?: string,
  ) {
    super(mensagens.map((m) => `${m.codigo} ${m.mensagem}`).join('; '));
  }
}
const refuse = (codigo: string, mensagem: string, correcao?: string): never => {
  throw new Refusal([
    { codigo, mensagem: mensagem.slice(0, 200), ...(correcao ? { correcao: correcao.slice(0, 200) } : {}) },
  ]);
};
const E160 = 'Arquivo enviado fora da estrutura do arquivo XML de entrada.';

function soap(status: number, inner: string): SandboxReply {
  return {
    status,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="${SOAP_NS}"><s:Body>${inner}</s:Body></s:Envelope>`,
  };
}
const fault = (status: number, code: string, text: string) =>
  soap(status, `<s:Fault><faultcode>${code}</faultcode><faultstring>${escapeXml(text)}</faultstring></s:Fault>`);
const e = (name: string, value: string | null | undefined) => (value ? `<${name}>${escapeXml(value)}</${name}>` : '');
/** an element of the types' namespace in an answer (prefix `t`, declared on the answer's root) */
const t = (name: string, value: string | null | undefined) => e(`t:${name}`, value);
/**
 * ListaMensagemRetorno in the types' namespace, or (`own`) in the answer's (ISSNet); with `rps`, each message as
 * tcMensagemRetornoLote (IdentificacaoRps, Codigo, Mensagem).
 */
const lista = (mensagens: Mensagem[], own = false, rps?: string) => {
  const p = own ? '' : 't:';
  const item = (m: Mensagem) =>
    rps === undefined
      ? `${t('Codigo', m.codigo)}${t('Mensagem', m.mensagem)}${t('Correcao', m.correcao)}`
      : `<t:IdentificacaoRps>${rps}</t:IdentificacaoRps>${t('Codigo', m.codigo)}${t('Mensagem', m.mensagem)}`;
  return `<${p}ListaMensagemRetorno>${mensagens.map((m) => `<${p}MensagemRetorno>${item(m)}</${p}MensagemRetorno>`).join('')}</${p}ListaMensagemRetorno>`;
};
const serialize = (node: Node) => new XMLSerializer().serializeToString(node);
const root8 = (cnpj: string | null | undefined) => (cnpj ?? '').replace(/\D/g, '').slice(0, 8);
/** children of an element re-serialised without their (inherited) namespace declarations */
const inner = (el: Element | null) =>
  el
    ? childElements(el)
        .map((c) => serialize(c).replace(/ xmlns="[^"]*"/g, ''))
        .join('')
    : '';

export function createAbrasfV1Service(
  profile: AbrasfV1SandboxProfile,
  options: AbrasfV1SandboxOptions,
): SandboxService {
  const { now, logger, signer } = options;
  const holdMs = options.holdMs ?? 1_000;
  const store = new GinfesStore(options.dataDir ? join(options.dataDir, profile.slug) : null, (m) => logger.warn(m));
  const names = new Map<string, string>();
  const registered = options.registered ?? ((_cnpj: string, im: string) => im.length > 0);
  /** the prestador's CNPJ under an element (Prestador, LoteRps), in the provider's types */
  const cnpjIn = (el: Element | null | undefined) =>
    textAt(el, profile.types?.prestadorCpfCnpj ? 'CpfCnpj/Cnpj' : 'Cnpj');
  const servicoMunicipio = profile.types?.servicoMunicipio ?? 'CodigoMunicipio';

  const clientCnpj = (req: SandboxRequest): string | null => {
    if (!req.clientCertificate) return null;
    try {
      const identity = readIcpBrasilIdentity(req.clientCertificate.raw);
      return identity.cnpj ?? identity.cpf;
    } catch {
      return null;
    }
  };

  /** The transport certificate, when the provider takes one, must be the prestador's (E157). */
  function transmitter(req: SandboxRequest, cnpj: string): void {
    if (!profile.clientCertificate) return;
    const holder = clientCnpj(req);
    if (!holder || root8(holder) !== root8(cnpj)) {
      refuse(
        'E157',
        'Usuário não está autorizado a utilizar esse serviço para esse contribuinte.',
        `Certificado: ${holder}; prestador: ${cnpj}.`,
      );
    }
  }

  /** A signature (E1 when missing or broken) by the prestador (E157); returns the signer's name. */
  function signature(xml: string, holder: Element, signed: Element, cnpj: string): string {
    const check = verifyEnvelopedSignature(xml, holder, signed, { documentReference: signed === holder });
    if (!check.ok) return refuse('E1', 'Assinatura do Hash não confere', check.detail);
    const signerId = check.value.identity.cnpj ?? check.value.identity.cpf;
    if (root8(signerId) !== root8(cnpj)) {
      refuse(
        'E157',
        'Usuário não está autorizado a utilizar esse serviço para esse contribuinte.',
        `Assinante: ${signerId}.`,
      );
    }
    return check.value.identity.subjectCN.split(':')[0]?.trim() || 'PRESTADOR';
  }

  function recepcionar(req: SandboxRequest, env: Ambiente, xml: string, root: Element): string {
    const lote = child(root, 'LoteRps')!;
    const cnpj = cnpjIn(lote) ?? '';
    transmitter(req, cnpj);
    let name = 'PRESTADOR';
    if (profile.signature.lote) name = signature(xml, root, lote, cnpj);
    const rpsList = childElements(child(lote, 'ListaRps')!);
    if (rpsList.length !== 1 || textAt(lote, 'QuantidadeRps') !== '1')
      refuse('E160', E160, 'Sandbox: um RPS por lote.');
    const rps = rpsList[0]!;
    const inf = child(rps, 'InfRps')!;
    if (profile.signature.rps) signature(xml, rps, inf, cnpjIn(child(inf, 'Prestador')) ?? '');
    if (!registered(cnpj, textAt(lote, 'InscricaoMunicipal') ?? ''))
      refuse('E43', 'Inscrição Municipal do prestador não encontrada na base de dados do município.');
    const ident = child(inf, 'IdentificacaoRps');
    const rpsKey = rpsKeyOf(
      env,
      cnpj,
      textAt(ident, 'Numero') ?? '',
      textAt(ident, 'Serie') ?? '',
      textAt(ident, 'Tipo') ?? '',
    );
    if (store.noteByRps(rpsKey) || store.liveLoteOf(rpsKey)) refuse('E10', 'RPS já informado.');
    const receivedAt = now();
    let protocolo: string;
    do protocolo = `${Date.now()}${randomInt(1000, 9999)}`;
    while (store.lote(protocolo));
    const record: Lote = {
      env,
      protocolo,
      numeroLote: textAt(lote, 'NumeroLote') ?? '',
      cnpj,
      receivedAt: receivedAt.toISOString(),
      xml,
      rpsKey,
      situacao: '2',
      mensagens: [],
    };
    store.saveLote(record);
    names.set(protocolo, name);
    logger.info(`sandbox ${profile.name}: lote ${record.numeroLote} received under protocol ${protocolo}`);
    return (
      e('NumeroLote', record.numeroLote) +
      e('DataRecebimento', brasiliaDateTime(receivedAt)) +
      e('Protocolo', protocolo)
    );
  }

  const infRpsOf = (lote: Lote) => {
    const root = parseDom(lote.xml).documentElement!;
    return { root, inf: at(root, 'LoteRps/ListaRps/Rps/InfRps')! };
  };

  function processingErrors(lote: Lote, when: Date): Mensagem[] {
    const { root, inf } = infRpsOf(lote);
    const out: Mensagem[] = [];
    if (cnpjIn(child(inf, 'Prestador')) !== lote.cnpj)
      out.push({
        codigo: 'E159',
        mensagem: 'CNPJ do prestador especificado no lote não confere com o prestador informado no RPS.',
      });
    if (textAt(inf, 'Prestador/InscricaoMunicipal') !== textAt(root, 'LoteRps/InscricaoMunicipal'))
      out.push({
        codigo: 'E70',
        mensagem: 'Inscrição Municipal do prestador especificada no lote não confere com o prestador informado no RPS.',
      });
    if (!(Number(textAt(inf, 'Servico/Valores/ValorServicos')) > 0))
      out.push({ codigo: 'E18', mensagem: 'O valor dos serviços deverá ser superior a R$0,00 (zero)' });
    const emissao = new Date(`${(textAt(inf, 'DataEmissao') ?? '').slice(0, 19)}-03:00`);
    if (!(emissao.getTime() <= when.getTime() + 5 * 60_000))
      out.push({ codigo: 'E16', mensagem: 'A data da emissão do RPS não poderá ser superior a data de hoje' });
    if (store.noteByRps(lote.rpsKey)) out.push({ codigo: 'E10', mensagem: 'RPS já informado.' });
    return out;
  }

  function issue(lote: Lote, when: Date): Note {
    const { inf } = infRpsOf(lote);
    const numero = store.nextNumber(lote.env, lote.cnpj);
    // the store keys notes by the number's value; the NFS-e writes it as the provider does (zero-padded: Publica)
    const shown = profile.note.numberDigits ? numero.padStart(profile.note.numberDigits, '0') : numero;
    const codigo = Array.from({ length: 9 }, () => 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'[randomInt(32)]).join('');
    const emissaoRps = (textAt(inf, 'DataEmissao') ?? '').slice(0, 19);
    const municipio = textAt(inf, `Servico/${servicoMunicipio}`) ?? '';
    const unsigned =
      `<Nfse xmlns="${profile.dataNamespace}"><InfNfse ${profile.note.idAttribute}="nfse${numero}">${e('Numero', shown)}${e('CodigoVerificacao', codigo)}` +
      `${e('DataEmissao', brasiliaDateTime(when))}<IdentificacaoRps>${inner(child(inf, 'IdentificacaoRps'))}</IdentificacaoRps>` +
      `${e('DataEmissaoRps', profile.note.dataEmissaoRps === 'dateTime' ? emissaoRps : emissaoRps.slice(0, 10))}${e('NaturezaOperacao', textAt(inf, 'NaturezaOperacao'))}` +
      `${e('RegimeEspecialTributacao', textAt(inf, 'RegimeEspecialTributacao'))}` +
      `${e('OptanteSimplesNacional', textAt(inf, 'OptanteSimplesNacional'))}${e('IncentivadorCultural', textAt(inf, 'IncentivadorCultural'))}` +
      `${e('Competencia', competencia(emissaoRps))}<Servico>${inner(child(inf, 'Servico'))}</Servico>` +
      `<PrestadorServico><IdentificacaoPrestador>${inner(child(inf, 'Prestador'))}</IdentificacaoPrestador>` +
      `${e('RazaoSocial', (names.get(lote.protocolo) ?? 'PRESTADOR').slice(0, 115))}<Endereco/></PrestadorServico>` +
      `<TomadorServico>${inner(child(inf, 'Tomador'))}</TomadorServico>` +
      `<OrgaoGerador>${e('CodigoMunicipio', municipio)}${e('Uf', UF[municipio.slice(0, 2)] ?? 'BA')}</OrgaoGerador>` +
      '</InfNfse></Nfse>';
    const nfseXml = profile.note.unsigned
      ? unsigned
      : signEnveloped(unsigned, { rootName: 'Nfse', elementName: 'InfNfse' }, signer as SandboxSigner, NOTE_SIGNATURE);
    const note: Note = {
      env: lote.env,
      rpsKey: lote.rpsKey,
      cnpj: lote.cnpj,
      numero,
      codigoVerificacao: codigo,
      nfseXml,
    };
    store.saveNote(note);
    logger.info(`sandbox ${profile.name}: NFS-e ${numero} issued for protocol ${lote.protocolo}`);
    return note;
  }

  function competencia(emissaoRps: string): string {
    if (profile.note.competencia === 'date') return emissaoRps.slice(0, 10);
    if (profile.note.competencia === 'gYearMonth') return emissaoRps.slice(0, 7);
    if (profile.note.competencia === 'yyyyMM') return emissaoRps.slice(0, 7).replace('-', '');
    return emissaoRps;
  }

  /** Processes every lote whose hold has passed. */
  function settle(): void {
    const when = now();
    for (const lote of store.allLotes()) {
      if (lote.situacao !== '2' || when.getTime() - new Date(lote.receivedAt).getTime() < holdMs) continue;
      const mensagens = processingErrors(lote, when);
      if (mensagens.length > 0) store.saveLote({ ...lote, situacao: '3', mensagens });
      else store.saveLote({ ...lote, situacao: '4', numeroNfse: issue(lote, when).numero });
    }
  }

  const compNfse = (note: Note) =>
    `<CompNfse>${note.nfseXml}${note.cancelamentoXml ? `<t:NfseCancelamento>${note.cancelamentoXml}</t:NfseCancelamento>` : ''}</CompNfse>`;

  function cancelar(req: SandboxRequest, env: Ambiente, xml: string, root: Element): string {
    const pedido = child(root, 'Pedido')!;
    const inf = child(pedido, 'InfPedidoCancelamento')!;
    const cnpj = textAt(inf, 'IdentificacaoNfse/Cnpj') ?? '';
    transmitter(req, cnpj);
    if (profile.signature.cancel) signature(xml, pedido, inf, cnpj);
    const note = store.noteByNumber(env, cnpj, textAt(inf, 'IdentificacaoNfse/Numero') ?? '');
    if (!note)
      return refuse('E78', 'Número da NFS-e inexistente na base de dados para o prestador de serviço pesquisado');
    if (note.cancelledAt) refuse('E79', 'Essa NFS-e já está cancelada');
    const dataHora = brasiliaDateTime(now());
    const pedidoXml = `<t:Pedido>${childElements(pedido).map(serialize).join('')}</t:Pedido>`;
    const id = `${profile.note.idAttribute}="canc${note.numero}"`;
    const confirmacao =
      profile.note.cancellation === 'official'
        ? officialConfirmation(
            `<t:Confirmacao ${id}>${pedidoXml}${t(profile.note.confirmationDate ?? 'DataHoraCancelamento', dataHora)}</t:Confirmacao>`,
          )
        : (profile.note.signedConfirmation ? officialConfirmation : (c: string) => c)(
            `<t:Confirmacao ${id}>${pedidoXml}<t:InfConfirmacaoCancelamento>${t('Sucesso', 'true')}` +
              `${t('DataHora', dataHora)}</t:InfConfirmacaoCancelamento></t:Confirmacao>`,
          );
    store.saveNote({ ...note, cancelledAt: dataHora, cancelamentoXml: confirmacao });
    return `<Cancelamento>${confirmacao}</Cancelamento>`;
  }

  /** The official confirmation, signed by the sandbox (tcCancelamentoNfse: Confirmacao then its Signature). */
  function officialConfirmation(confirmacao: string): string {
    // the holder in the answer's namespaces, so that the signature is computed where it is read
    const ns = profile.dataNamespace;
    const own = profile.answerNamespace?.(ROOTS.cancelar.answer) ?? ns;
    const holder = `<Cancelamento xmlns="${own}" xmlns:t="${ns}">${confirmacao}</Cancelamento>`;
    const signed = signEnveloped(
      holder,
      { rootName: 'Cancelamento', elementName: 'Confirmacao' },
      signer as SandboxSigner,
      NOTE_SIGNATURE,
    );
    return signed.slice(holder.indexOf('>') + 1, signed.lastIndexOf('</Cancelamento>'));
  }

  /** A consultation's prestador, its certificate and (when the profile signs consultations) its signature. */
  function prestadorOf(req: SandboxRequest, xml: string, root: Element): string {
    const cnpj = cnpjIn(child(root, 'Prestador')) ?? '';
    transmitter(req, cnpj);
    if (profile.signature.queries) signature(xml, root, root, cnpj);
    return cnpj;
  }

  function loteOf(env: Ambiente, cnpj: string, root: Element): Lote {
    const lote = store.lote(textAt(root, 'Protocolo') ?? '');
    if (!lote || lote.env !== env || lote.cnpj !== cnpj)
      refuse('E86', 'Número do protocolo de recebimento do lote inexistente na base de dados');
    return lote!;
  }

  function handle(req: SandboxRequest, env: Ambiente, operation: V1Operation, xml: string, root: Element): string {
    if (operation === 'recepcionar') return recepcionar(req, env, xml, root);
    if (operation === 'cancelar') return cancelar(req, env, xml, root);
    const cnpj = prestadorOf(req, xml, root);
    settle();
    if (operation === 'consultarSituacao') {
      const lote = store.lote(loteOf(env, cnpj, root).protocolo)!;
      return e('NumeroLote', lote.numeroLote) + e('Situacao', lote.situacao);
    }
    if (operation === 'consultarLote') {
      const lote = store.lote(loteOf(env, cnpj, root).protocolo)!;
      const ident = child(infRpsOf(lote).inf, 'IdentificacaoRps');
      const rps = profile.types?.loteMessagesWithRps
        ? ['Numero', 'Serie', 'Tipo'].map((name) => t(name, textAt(ident, name))).join('')
        : undefined;
      if (lote.situacao === '2')
        throw new Refusal(
          [
            {
              codigo: 'E92',
              mensagem: 'Esse RPS foi enviado para a nossa base de dados, mas ainda não foi processado',
            },
          ],
          rps,
        );
      if (lote.situacao === '3') throw new Refusal(lote.mensagens, rps);
      return `<ListaNfse>${compNfse(store.noteByRps(lote.rpsKey)!)}</ListaNfse>`;
    }
    if (operation === 'consultarPorRps') {
      const ident = child(root, 'IdentificacaoRps');
      const key = rpsKeyOf(
        env,
        cnpj,
        textAt(ident, 'Numero') ?? '',
        textAt(ident, 'Serie') ?? '',
        textAt(ident, 'Tipo') ?? '',
      );
      const note = store.noteByRps(key);
      if (note && answerRoot('consultarPorRps') !== ROOTS.consultarPorRps.answer)
        return `<ListaNfse>${compNfse(note)}</ListaNfse>`;
      if (note) return compNfse(note);
      if (store.liveLoteOf(key))
        refuse('E92', 'Esse RPS foi enviado para a nossa base de dados, mas ainda não foi processado');
      return refuse('E4', 'Esse RPS não foi enviado para a nossa base de dados');
    }
    const numero = textAt(root, 'NumeroNfse') ?? textAt(root, 'Faixa/NumeroNfseInicial');
    const notes = numero
      ? [store.noteByNumber(env, cnpj, numero)].filter((n): n is Note => !!n)
      : store
          .allLotes()
          .flatMap((l) => (l.env === env && l.cnpj === cnpj && l.situacao === '4' ? [store.noteByRps(l.rpsKey)!] : []));
    if (notes.length === 0)
      refuse('E78', 'Número da NFS-e inexistente na base de dados para o prestador de serviço pesquisado');
    return `<ListaNfse>${notes.map(compNfse).join('')}</ListaNfse>`;
  }

  function soapPost(req: SandboxRequest): SandboxReply {
    const env: Ambiente = req.params.ambiente === 'producao' ? 1 : 2;
    const read = readSoap11Call(req.body);
    if (!read.ok) return fault(500, read.kind === 'version' ? 's:VersionMismatch' : 's:Client', read.message);
    const call = read.call;
    const spec = call && call.namespaceURI === profile.soap.namespace ? profile.operations[call.localName] : undefined;
    if (!call || !spec) return fault(500, 's:Client', `Operação não suportada: ${call?.localName ?? '(vazia)'}`);
    const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
    if (action !== spec.soapAction)
      return fault(
        500,
        's:Client',
        `SOAPAction ${action || '(vazia)'} não corresponde a ${spec.soapAction || '(vazia)'}.`,
      );
    const { header } = profile.soap;
    const expected = [...(header ? [header.parameter] : []), spec.parameter];
    const wrapper = profile.soap.requestWrapper ? childElements(call) : null;
    if (
      wrapper &&
      (wrapper.length !== 1 || wrapper[0]!.localName !== `${call.localName}Request` || wrapper[0]!.namespaceURI)
    )
      return fault(500, 's:Client', `${call.localName}: esperado ${call.localName}Request não qualificado.`);
    const params = childElements(wrapper ? wrapper[0]! : call);
    const paramNs = profile.soap.qualifiedParameters ? profile.soap.namespace : null;
    if (
      params.length !== expected.length ||
      params.some((p, i) => p.localName !== expected[i] || (p.namespaceURI ?? null) !== paramNs)
    )
      return fault(
        500,
        's:Client',
        `${call.localName}: esperados ${expected.join(', ')} (${paramNs ?? 'não qualificados'}).`,
      );
    const request = profile.requestRoots?.[spec.operation] ?? ROOTS[spec.operation].request;
    const answer = answerRoot(spec.operation);
    let body: string;
    /** an answer the provider's schema has no shape for (ISSNet's ConsultarLoteRps of an unknown protocol) */
    let shapeless = false;
    try {
      if (header && !header.valid((params[0]!.textContent ?? '').trim()))
        refuse('E160', E160, 'Cabeçalho fora do layout do provedor.');
      const xml = (params[params.length - 1]!.textContent ?? '').trim();
      const valid = validateXml(profile.schema, xml);
      if (!valid.ok) refuse('E160', E160, valid.errors[0]);
      const root = parseDom(xml).documentElement!;
      if (root.localName !== request) refuse('E160', E160, `${call.localName} recebe ${request}.`);
      body = handle(req, env, spec.operation, xml, root);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      const withRps = profile.types?.loteMessagesWithRps && spec.operation === 'consultarLote';
      shapeless = !!withRps && err.rps === undefined;
      body = lista(err.mensagens, profile.types?.messagesInAnswerNamespace, withRps ? err.rps : undefined);
    }
    const answerNs = profile.answerNamespace?.(answer) ?? profile.dataNamespace;
    const result = `<${answer} xmlns="${answerNs}" xmlns:t="${profile.dataNamespace}">${body}</${answer}>`;
    const answerSchema = shapeless ? null : profile.answerSchema?.(answer);
    if (answerSchema) {
      const own = validateXml(answerSchema, result);
      if (!own.ok)
        throw new Error(`sandbox ${profile.name}: its own ${answer} is outside the schema: ${own.errors[0]}`);
    }
    const element = profile.soap.result === 'Result' ? `o:${call.localName}Result` : profile.soap.result;
    return soap(
      200,
      `<o:${call.localName}Response xmlns:o="${profile.soap.namespace}"><${element}>${escapeXml(result)}</${element}></o:${call.localName}Response>`,
    );
  }

  function answerRoot(operation: V1Operation): string {
    return profile.answerRoots?.[operation] ?? ROOTS[operation].answer;
  }

  const writes = Object.entries(profile.operations)
    .filter(([, s]) => s.operation === 'recepcionar')
    .map(([el]) => el);
  return {
    family: `abrasf-v1-${profile.slug}`,
    name: profile.name,
    mount: `/municipal/${profile.slug}/:ambiente(producao|producaorestrita)`,
    routes: [{ name: `${profile.slug}.soap`, method: 'POST', path: '/', handler: soapPost }],
    before: (req) =>
      !profile.clientCertificate || req.clientCertificate
        ? null
        : fault(403, 's:Client', 'Certificado digital do cliente ausente.'),
    notFound: (req) => fault(404, 's:Client', `${req.method} ${req.subPath} não existe.`),
    errorReply: (_req, err) => fault(500, 's:Server', err.message),
    faults: {
      errorReply: () => fault(500, 's:Server', 'Falha simulada pelo sandbox.'),
      isWrite: (req) => writes.some((op) => new RegExp(`<(\\w+:)?${op}[\\s>]`).test(req.body.toString('utf8'))),
    },
  };
}
