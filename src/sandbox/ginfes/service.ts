import { randomInt } from 'node:crypto';
import { XMLSerializer } from '@xmldom/xmldom';
import { validateXml } from '../../xml/xsd.ts';
import { readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { at, child, childElements, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import { type SandboxSigner, signEnveloped, verifyEnvelopedSignature } from '../kit/xml-signature.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import { brasiliaDateTime } from '../sefin/time.ts';
import { type Ambiente, GinfesStore, type Lote, type Mensagem, type Note, rpsKeyOf } from './store.ts';

/**
 * The GINFES sandbox (briefs/providers-own.md §3 and §5; ServiceGinfesImpl WSDL): JAX-RPC rpc/literal SOAP 1.1, the
 * operation element in `http://producao.ginfes.com.br` (`/producao`) or `http://homologacao.ginfes.com.br`
 * (`/producaorestrita`), unqualified string parts `arg0` (cabecalho v03, versao 3) and `arg1` (the message), the
 * answer an ESCAPED XML string in `<return>`. Mutual TLS. Only the V3 operations are served (the engine's reading;
 * the legacy one-argument operations get a Client fault).
 *
 * - every message is validated with the v03 XSDs (schemas/ginfes, E160 when it is outside the schema) and its
 *   signature with the kit's own verifier: the lote on LoteRps@Id, the cancellation on InfPedidoCancelamento@Id,
 *   consultations whole (`URI=""`); a missing or broken signature is E1. The transport certificate and the
 *   signer must be the prestador's (E157).
 * - RecepcionarLoteRpsV3: E10 for an RPS already received; otherwise a Protocolo, the lote in Situacao 2 (não
 *   processado) for `holdMs`, then processed: 3 (E16, E18, E70, E105: CNAE required, E159) or 4 with the NFS-e.
 * - ConsultarSituacaoLoteRpsV3 (E86 unknown protocol), ConsultarLoteRpsV3 (E92 while not processed),
 *   ConsultarNfsePorRpsV3 (E92, E4), ConsultarNfseV3 (by NumeroNfse or every note of the prestador; E78),
 *   CancelarNfseV3 (E78, E79 already cancelled). Notes are signed by the sandbox (RSA-SHA1, exclusive C14N).
 * - a lote carries one RPS here (what the engine sends); more is refused with E160 and a note saying so.
 * - the kit's fault injection: RecepcionarLoteRps and CancelarNfse are the writes.
 */
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const TIPOS = 'http://www.ginfes.com.br/tipos_v03.xsd';
const CABECALHO_NS = 'http://www.ginfes.com.br/cabecalho_v03.xsd';
const ns = (service: string) => `http://www.ginfes.com.br/${service}_v03.xsd`;
const SERVICE_NS: Record<Ambiente, string> = {
  1: 'http://producao.ginfes.com.br',
  2: 'http://homologacao.ginfes.com.br',
};
const NOTE_SIGNATURE = {
  signatureAlgorithm: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
  digestAlgorithm: 'http://www.w3.org/2000/09/xmldsig#sha1',
  canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
};
const UF: Record<string, string> = {
  '11': 'RO',
  '12': 'AC',
  '13': 'AM',
  '14': 'RR',
  '15': 'PA',
  '16': 'AP',
  '17': 'TO',
  '21': 'MA',
  '22': 'PI',
  '23': 'CE',
  '24': 'RN',
  '25': 'PB',
  '26': 'PE',
  '27': 'AL',
  '28': 'SE',
  '29': 'BA',
  '31': 'MG',
  '32': 'ES',
  '33': 'RJ',
  '35': 'SP',
  '41': 'PR',
  '42': 'SC',
  '43': 'RS',
  '50': 'MS',
  '51': 'MT',
  '52': 'GO',
  '53': 'DF',
};

/** The V3 operations: the message root each takes and the answer root (with its schema) it gives. */
const OPERATIONS: Record<string, { request: string; answer: string; service: string }> = {
  RecepcionarLoteRpsV3: {
    request: 'EnviarLoteRpsEnvio',
    answer: 'EnviarLoteRpsResposta',
    service: 'servico_enviar_lote_rps_resposta',
  },
  ConsultarSituacaoLoteRpsV3: {
    request: 'ConsultarSituacaoLoteRpsEnvio',
    answer: 'ConsultarSituacaoLoteRpsResposta',
    service: 'servico_consultar_situacao_lote_rps_resposta',
  },
  ConsultarLoteRpsV3: {
    request: 'ConsultarLoteRpsEnvio',
    answer: 'ConsultarLoteRpsResposta',
    service: 'servico_consultar_lote_rps_resposta',
  },
  ConsultarNfsePorRpsV3: {
    request: 'ConsultarNfseRpsEnvio',
    answer: 'ConsultarNfseRpsResposta',
    service: 'servico_consultar_nfse_rps_resposta',
  },
  ConsultarNfseV3: {
    request: 'ConsultarNfseEnvio',
    answer: 'ConsultarNfseResposta',
    service: 'servico_consultar_nfse_resposta',
  },
  CancelarNfseV3: {
    request: 'CancelarNfseEnvio',
    answer: 'CancelarNfseResposta',
    service: 'servico_cancelar_nfse_resposta',
  },
};
const WRITES = ['RecepcionarLoteRpsV3', 'CancelarNfseV3'];

export interface GinfesSandboxOptions extends MunicipalSandboxDependencies {
  /** how long a lote stays "não processado" before it is processed (default 1 s) */
  holdMs?: number;
}

class Refusal extends Error {
  constructor(readonly mensagens: Mensagem[]) {
    super(mensagens.map((m) => `${m.codigo} ${m.mensagem}`).join('; '));
  }
}
const refuse = (codigo: string, mensagem: string, correcao?: string): never => {
  throw new Refusal([
    { codigo, mensagem: mensagem.slice(0, 200), ...(correcao ? { correcao: correcao.slice(0, 200) } : {}) },
  ]);
};

function soap(status: number, inner: string): SandboxReply {
  return {
    status,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP_NS}"><soap:Body>${inner}</soap:Body></soap:Envelope>`,
  };
}
const fault = (status: number, code: string, text: string) =>
  soap(status, `<soap:Fault><faultcode>${code}</faultcode><faultstring>${escapeXml(text)}</faultstring></soap:Fault>`);

const e3 = (name: string, value: string) => `<ns3:${name}>${escapeXml(value)}</ns3:${name}>`;
const tp = (name: string, value: string | null | undefined) =>
  value ? `<tipos:${name}>${escapeXml(value)}</tipos:${name}>` : '';
const lista = (mensagens: Mensagem[]) =>
  `<tipos:ListaMensagemRetorno>${mensagens
    .map(
      (m) =>
        `<tipos:MensagemRetorno>${tp('Codigo', m.codigo)}${tp('Mensagem', m.mensagem)}${tp('Correcao', m.correcao)}</tipos:MensagemRetorno>`,
    )
    .join('')}</tipos:ListaMensagemRetorno>`;
const serialize = (node: Node) => new XMLSerializer().serializeToString(node);
const digitsRoot = (cnpj: string | null | undefined) => (cnpj ?? '').replace(/\D/g, '').slice(0, 8);

export function createGinfesService(options: GinfesSandboxOptions): SandboxService {
  const { now, logger, signer } = options;
  const holdMs = options.holdMs ?? 1_000;
  const store = new GinfesStore(options.dataDir, (m) => logger.warn(m));
  /** the certificate holder's name of each lote (RazaoSocial of the note it becomes) */
  const names = new Map<string, string>();

  const clientCnpj = (req: SandboxRequest): string | null => {
    if (!req.clientCertificate) return null;
    try {
      const identity = readIcpBrasilIdentity(req.clientCertificate.raw);
      return identity.cnpj ?? identity.cpf;
    } catch {
      return null;
    }
  };

  /** The signature (E1 when missing or broken) and the certificates (E157 unless the prestador's). */
  function authenticate(req: SandboxRequest, xml: string, root: Element, signed: Element, cnpj: string): string {
    const check = verifyEnvelopedSignature(xml, root, signed, { documentReference: signed === root });
    if (!check.ok) refuse('E1', 'Assinatura do Hash não confere', check.detail);
    const signerId = check.ok ? (check.value.identity.cnpj ?? check.value.identity.cpf) : null;
    const transmitter = clientCnpj(req);
    if (
      !signerId ||
      !transmitter ||
      digitsRoot(signerId) !== digitsRoot(cnpj) ||
      digitsRoot(transmitter) !== digitsRoot(cnpj)
    ) {
      refuse(
        'E157',
        'Usuário não está autorizado a utilizar esse serviço para esse contribuinte.',
        `Certificado: ${signerId ?? transmitter}; prestador: ${cnpj}.`,
      );
    }
    return check.ok ? check.value.identity.subjectCN.split(':')[0]?.trim() || 'PRESTADOR' : 'PRESTADOR';
  }

  function newProtocol(): string {
    let p: string;
    do p = `${Date.now()}${randomInt(1000, 9999)}`;
    while (store.lote(p));
    return p;
  }

  function recepcionar(req: SandboxRequest, env: Ambiente, xml: string, root: Element): string {
    const lote = child(root, 'LoteRps');
    const cnpj = textAt(lote, 'Cnpj') ?? '';
    const name = authenticate(req, xml, root, lote!, cnpj);
    const rpsList = childElements(child(lote, 'ListaRps')!);
    if (rpsList.length !== 1 || textAt(lote, 'QuantidadeRps') !== '1') {
      refuse('E160', 'Arquivo enviado fora da estrutura do arquivo XML de entrada.', 'Sandbox: um RPS por lote.');
    }
    const ident = at(rpsList[0], 'InfRps/IdentificacaoRps');
    const rpsKey = rpsKeyOf(
      env,
      cnpj,
      textAt(ident, 'Numero') ?? '',
      textAt(ident, 'Serie') ?? '',
      textAt(ident, 'Tipo') ?? '',
    );
    if (store.noteByRps(rpsKey) || store.liveLoteOf(rpsKey)) refuse('E10', 'RPS já informado.');
    const receivedAt = now();
    const record: Lote = {
      env,
      protocolo: newProtocol(),
      numeroLote: textAt(lote, 'NumeroLote') ?? '',
      cnpj,
      receivedAt: receivedAt.toISOString(),
      xml,
      rpsKey,
      situacao: '2',
      mensagens: [],
    };
    store.saveLote(record);
    names.set(record.protocolo, name);
    logger.info(`sandbox GINFES: lote ${record.numeroLote} received under protocol ${record.protocolo}`);
    return (
      e3('NumeroLote', record.numeroLote) +
      e3('DataRecebimento', brasiliaDateTime(receivedAt)) +
      e3('Protocolo', record.protocolo)
    );
  }
  /** Processes every lote whose hold has passed. */
  function settle(): void {
    const at_ = now();
    for (const lote of store.allLotes()) {
      if (lote.situacao !== '2' || at_.getTime() - new Date(lote.receivedAt).getTime() < holdMs) continue;
      const mensagens = processingErrors(lote, at_);
      if (mensagens.length > 0) store.saveLote({ ...lote, situacao: '3', mensagens });
      else {
        const note = issue(lote, at_);
        store.saveLote({ ...lote, situacao: '4', numeroNfse: note.numero });
      }
    }
  }

  function infRpsOf(lote: Lote): { root: Element; inf: Element } {
    const root = parseDom(lote.xml).documentElement!;
    return { root, inf: at(root, 'LoteRps/ListaRps/Rps/InfRps')! };
  }

  function processingErrors(lote: Lote, at_: Date): Mensagem[] {
    const { root, inf } = infRpsOf(lote);
    const out: Mensagem[] = [];
    if (textAt(inf, 'Prestador/Cnpj') !== lote.cnpj)
      out.push({
        codigo: 'E159',
        mensagem: 'CNPJ do prestador especificado no lote não confere com o prestador informado no RPS.',
      });
    const im = textAt(inf, 'Prestador/InscricaoMunicipal');
    if (im !== undefined && im !== textAt(root, 'LoteRps/InscricaoMunicipal'))
      out.push({
        codigo: 'E70',
        mensagem: 'Inscrição Municipal do prestador especificada no lote não confere com o prestador informado no RPS.',
      });
    if (!(Number(textAt(inf, 'Servico/Valores/ValorServicos')) > 0))
      out.push({ codigo: 'E18', mensagem: 'O valor dos serviços deverá ser superior a R$0,00 (zero)' });
    const emissao = new Date(`${textAt(inf, 'DataEmissao')}-03:00`);
    if (!(emissao.getTime() <= at_.getTime() + 5 * 60_000))
      out.push({ codigo: 'E16', mensagem: 'A data da emissão do RPS não poderá ser superior a data de hoje' });
    if (!textAt(inf, 'Servico/CodigoCnae'))
      out.push({
        codigo: 'E105',
        mensagem: 'Campo código CNAE informado incorretamente',
        correcao: 'O CNAE é obrigatório no GINFES.',
      });
    if (store.noteByRps(lote.rpsKey)) out.push({ codigo: 'E10', mensagem: 'RPS já informado.' });
    return out;
  }

  function issue(lote: Lote, at_: Date): Note {
    const { inf } = infRpsOf(lote);
    const numero = store.nextNumber(lote.env, lote.cnpj);
    const codigo = Array.from({ length: 9 }, () => 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'[randomInt(32)]).join('');
    const emissaoRps = textAt(inf, 'DataEmissao') ?? '';
    const municipio = textAt(inf, 'Servico/CodigoMunicipio') ?? '';
    const tomador = child(inf, 'Tomador');
    const unsigned =
      `<Nfse xmlns="${TIPOS}"><InfNfse Id="NFSE${numero}">${tp('Numero', numero)}${tp('CodigoVerificacao', codigo)}` +
      `${tp('DataEmissao', brasiliaDateTime(at_))}${serialize(child(inf, 'IdentificacaoRps')!)}` +
      `${tp('DataEmissaoRps', emissaoRps.slice(0, 10))}${tp('NaturezaOperacao', textAt(inf, 'NaturezaOperacao'))}` +
      `${tp('RegimeEspecialTributacao', textAt(inf, 'RegimeEspecialTributacao'))}` +
      `${tp('OptanteSimplesNacional', textAt(inf, 'OptanteSimplesNacional'))}${tp('IncentivadorCultural', textAt(inf, 'IncentivadorCultural'))}` +
      `${tp('Competencia', emissaoRps)}${serialize(child(inf, 'Servico')!)}` +
      `<tipos:PrestadorServico><tipos:IdentificacaoPrestador>${tp('Cnpj', lote.cnpj)}${tp('InscricaoMunicipal', textAt(inf, 'Prestador/InscricaoMunicipal'))}</tipos:IdentificacaoPrestador>` +
      `${tp('RazaoSocial', (names.get(lote.protocolo) ?? 'PRESTADOR').slice(0, 115))}<tipos:Endereco/></tipos:PrestadorServico>` +
      `<tipos:TomadorServico>${tomador ? childElements(tomador).map(serialize).join('') : ''}</tipos:TomadorServico>` +
      `<tipos:OrgaoGerador>${tp('CodigoMunicipio', municipio)}${tp('Uf', UF[municipio.slice(0, 2)] ?? 'SP')}</tipos:OrgaoGerador>` +
      '</InfNfse></Nfse>';
    const withPrefix = unsigned.replace(`<Nfse xmlns="${TIPOS}">`, `<Nfse xmlns="${TIPOS}" xmlns:tipos="${TIPOS}">`);
    const nfseXml = signEnveloped(
      withPrefix,
      { rootName: 'Nfse', elementName: 'InfNfse' },
      signer as SandboxSigner,
      NOTE_SIGNATURE,
    );
    const note: Note = {
      env: lote.env,
      rpsKey: lote.rpsKey,
      cnpj: lote.cnpj,
      numero,
      codigoVerificacao: codigo,
      nfseXml,
    };
    store.saveNote(note);
    logger.info(`sandbox GINFES: NFS-e ${numero} issued for protocol ${lote.protocolo}`);
    return note;
  }

  const compNfse = (note: Note) =>
    `<ns3:CompNfse>${note.nfseXml}${note.cancelamentoXml ? `<tipos:NfseCancelamento>${note.cancelamentoXml}</tipos:NfseCancelamento>` : ''}</ns3:CompNfse>`;

  function prestadorOf(req: SandboxRequest, xml: string, root: Element): string {
    const cnpj = textAt(root, 'Prestador/Cnpj') ?? '';
    authenticate(req, xml, root, root, cnpj);
    return cnpj;
  }

  function loteOf(env: Ambiente, cnpj: string, root: Element): Lote {
    const lote = store.lote(textAt(root, 'Protocolo') ?? '');
    if (!lote || lote.env !== env || lote.cnpj !== cnpj)
      refuse('E86', 'Número do protocolo de recebimento do lote inexistente na base de dados');
    return lote!;
  }

  function cancelar(req: SandboxRequest, env: Ambiente, xml: string, root: Element): string {
    const pedido = child(root, 'Pedido')!;
    const inf = child(pedido, 'InfPedidoCancelamento')!;
    const cnpj = textAt(inf, 'IdentificacaoNfse/Cnpj') ?? '';
    authenticate(req, xml, pedido, inf, cnpj);
    const note = store.noteByNumber(env, cnpj, textAt(inf, 'IdentificacaoNfse/Numero') ?? '');
    if (!note)
      return refuse('E78', 'Número da NFS-e inexistente na base de dados para o prestador de serviço pesquisado');
    if (note.cancelledAt) refuse('E79', 'Essa NFS-e já está cancelada');
    const dataHora = brasiliaDateTime(now());
    const confirmacao =
      `<tipos:Confirmacao Id="CANC${note.numero}"><tipos:Pedido>${childElements(pedido).map(serialize).join('')}</tipos:Pedido>` +
      `<tipos:InfConfirmacaoCancelamento><tipos:Sucesso>true</tipos:Sucesso>${tp('DataHora', dataHora)}</tipos:InfConfirmacaoCancelamento></tipos:Confirmacao>`;
    store.saveNote({ ...note, cancelledAt: dataHora, cancelamentoXml: confirmacao });
    return `<ns3:Cancelamento>${confirmacao}</ns3:Cancelamento>`;
  }

  function handle(req: SandboxRequest, env: Ambiente, operation: string, xml: string, root: Element): string {
    switch (operation) {
      case 'RecepcionarLoteRpsV3':
        return recepcionar(req, env, xml, root);
      case 'ConsultarSituacaoLoteRpsV3': {
        const lote = loteOf(env, prestadorOf(req, xml, root), root);
        settle();
        return e3('NumeroLote', lote.numeroLote) + e3('Situacao', store.lote(lote.protocolo)!.situacao);
      }
      case 'ConsultarLoteRpsV3': {
        const lote = loteOf(env, prestadorOf(req, xml, root), root);
        settle();
        const current = store.lote(lote.protocolo)!;
        if (current.situacao === '2')
          refuse('E92', 'Esse RPS foi enviado para a nossa base de dados, mas ainda não foi processado');
        if (current.situacao === '3') throw new Refusal(current.mensagens);
        return `<ns3:ListaNfse>${compNfse(store.noteByRps(current.rpsKey)!)}</ns3:ListaNfse>`;
      }
      case 'ConsultarNfsePorRpsV3': {
        const cnpj = prestadorOf(req, xml, root);
        settle();
        const ident = child(root, 'IdentificacaoRps');
        const key = rpsKeyOf(
          env,
          cnpj,
          textAt(ident, 'Numero') ?? '',
          textAt(ident, 'Serie') ?? '',
          textAt(ident, 'Tipo') ?? '',
        );
        const note = store.noteByRps(key);
        if (note) return compNfse(note);
        if (store.liveLoteOf(key))
          refuse('E92', 'Esse RPS foi enviado para a nossa base de dados, mas ainda não foi processado');
        return refuse('E4', 'Esse RPS não foi enviado para a nossa base de dados');
      }
      case 'ConsultarNfseV3': {
        const cnpj = prestadorOf(req, xml, root);
        settle();
        const numero = textAt(root, 'NumeroNfse');
        const notes = numero
          ? [store.noteByNumber(env, cnpj, numero)].filter((n): n is Note => !!n)
          : store
              .allLotes()
              .flatMap((l) =>
                l.env === env && l.cnpj === cnpj && l.situacao === '4' ? [store.noteByRps(l.rpsKey)!] : [],
              );
        if (notes.length === 0)
          refuse('E78', 'Número da NFS-e inexistente na base de dados para o prestador de serviço pesquisado');
        return `<ns3:ListaNfse>${notes.map(compNfse).join('')}</ns3:ListaNfse>`;
      }
      default:
        return cancelar(req, env, xml, root);
    }
  }

  function soapPost(req: SandboxRequest): SandboxReply {
    const env: Ambiente = req.params.ambiente === 'producao' ? 1 : 2;
    let envelope: Element | null;
    try {
      envelope = parseDom(req.body.toString('utf8')).documentElement;
    } catch (err) {
      return fault(500, 'soap:Client', `XML malformado: ${(err as Error).message}`);
    }
    if (envelope?.localName !== 'Envelope' || envelope.namespaceURI !== SOAP_NS)
      return fault(500, 'soap:VersionMismatch', 'Somente SOAP 1.1 é aceito.');
    const call = childElements(child(envelope, 'Body') ?? envelope)[0];
    const operation = call?.localName ?? '';
    const spec = OPERATIONS[operation];
    if (!call || !spec) return fault(500, 'soap:Client', `Operação não suportada: ${operation || '(vazia)'}`);
    if (call.namespaceURI !== SERVICE_NS[env])
      return fault(500, 'soap:Client', `A operação ${operation} deve estar no namespace ${SERVICE_NS[env]}.`);
    const args = childElements(call);
    const arg = (name: string) => args.find((a) => a.localName === name && !a.namespaceURI);
    const arg0 = arg('arg0');
    const arg1 = arg('arg1');
    if (!arg0 || !arg1 || args.length !== 2)
      return fault(500, 'soap:Client', `${operation}: esperados arg0 (cabecalho) e arg1 (dados), não qualificados.`);
    const answer = (inner: string) =>
      `<ns3:${spec.answer} xmlns:ns3="${ns(spec.service)}" xmlns:tipos="${TIPOS}">${inner}</ns3:${spec.answer}>`;
    let inner: string;
    try {
      const cabecalho = (arg0.textContent ?? '').trim();
      const cab = validateXml('ginfesV3', cabecalho);
      const cabRoot = cab.ok ? parseDom(cabecalho).documentElement : null;
      if (
        cabRoot?.localName !== 'cabecalho' ||
        cabRoot.namespaceURI !== CABECALHO_NS ||
        cabRoot.getAttribute('versao') !== '3' ||
        textAt(cabRoot, 'versaoDados') !== '3'
      )
        refuse(
          'E160',
          'Arquivo enviado fora da estrutura do arquivo XML de entrada.',
          'Cabeçalho v03 com versao e versaoDados 3.',
        );
      const xml = (arg1.textContent ?? '').trim();
      const valid = validateXml('ginfesV3', xml);
      if (!valid.ok) refuse('E160', 'Arquivo enviado fora da estrutura do arquivo XML de entrada.', valid.errors[0]);
      const root = parseDom(xml).documentElement!;
      if (root.localName !== spec.request)
        refuse(
          'E160',
          'Arquivo enviado fora da estrutura do arquivo XML de entrada.',
          `${operation} recebe ${spec.request}.`,
        );
      inner = handle(req, env, operation, xml, root);
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      inner = lista(err.mensagens);
    }
    return soap(
      200,
      `<ns1:${operation}Response xmlns:ns1="${SERVICE_NS[env]}"><return>${escapeXml(answer(inner))}</return></ns1:${operation}Response>`,
    );
  }

  return {
    family: 'ginfes',
    name: 'GINFES',
    mount: '/municipal/ginfes/:ambiente(producao|producaorestrita)',
    routes: [{ name: 'ginfes.soap', method: 'POST', path: '/', handler: soapPost }],
    before: (req) =>
      req.clientCertificate ? null : fault(403, 'soap:Client', 'Certificado digital do cliente ausente.'),
    notFound: (req) => fault(404, 'soap:Client', `${req.method} ${req.subPath} não existe.`),
    errorReply: (_req, err) => fault(500, 'soap:Server', err.message),
    faults: {
      errorReply: () => fault(500, 'soap:Server', 'Falha simulada pelo sandbox.'),
      isWrite: (req) => WRITES.some((op) => req.body.toString('utf8').includes(`:${op}`)),
    },
  };
}

/** The GINFES sandbox as mounted by the sandbox server (`/municipal/ginfes/<producao|producaorestrita>`). */
export const ginfesSandbox: MunicipalSandbox = {
  engine: 'ginfes:ginfes',
  slug: 'ginfes',
  create: (deps) => createGinfesService(deps),
};
