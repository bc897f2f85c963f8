import { randomBytes, X509Certificate } from 'node:crypto';
import { readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { at, child, childElements, escapeXml, parseDom, rootElementText, textAt, XMLDSIG_NS } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import {
  readSoapRequest,
  SoapClientError,
  schemaErrors,
  soapAnswer,
  soapFault,
  stringParameter,
  verifyDocumentSignature,
} from '../soap-string/common.ts';
import { createLoteQueue, type ReceivedLote, rpsTexts, SITUACOES } from './async-lotes.ts';
import { asyncSchemaErrors } from './async-schemas.ts';
import { cancellationStringOf, rpsStringOf, stringSignatureVerifies } from './signature-strings.ts';

/**
 * City of São Paulo `lotenfe.asmx` (briefs/providers-own.md §1.2–1.7, manual v3.3.5, WSDL): .NET ASMX document/literal
 * SOAP 1.1 in `http://www.prefeitura.sp.gov.br/nfe`, `<XRequest><VersaoSchema/><MensagemXML/>` (qualified), the
 * SOAPAction `http://www.prefeitura.sp.gov.br/nfe/ws/<op>` checked, answers `<XResponse><RetornoXML>` as an escaped
 * string. It checks: the TLS client certificate (mTLS), VersaoSchema = Cabecalho@Versao = 2 (1002), the v02 XSD
 * (1001), the message signature (URI="", RSA-SHA1 only: 1057), CPFCNPJRemetente = the TLS certificate (1100), the RPS
 * `Assinatura` string (1206) and the cancellation signature (1305) against the certificate's public key,
 * ValorInicialCobrado refused (640), MunicipioPrestacao with T (1223), service codes below 1000 "inexistente" (306,
 * the sandbox's stand-in for the unpublished table). A re-sent RPS with identical content answers the same NF-e; with
 * other content the old note is cancelled and a new one issued with alert 217 (manual); 1106 on an unknown note;
 * alert 1301 on an already cancelled one. Notes are kept in memory (queries and cancellation).
 *
 * The asynchronous service at its official path `lotenfeasync.asmx` (§1.3, §1.6: EnvioLoteRpsAsync,
 * TesteEnvioLoteRpsAsync, ConsultaSituacaoLoteSync; parameter `versaoSchema`; RetornoXML as elements): the lote
 * checked against PedidoEnvioLoteRPSAsync_v02.xsd and the situation query against ConsultaSituacaoLoteAsync_v02.xsd
 * (1001), the message signature (1057), the remetente (1100) and, at reception, the RPS checks above (a transactional
 * lote with an error is refused there, with its Erros, and gets no protocol); a received lote answers a 32-character
 * protocol and goes through the state machine of ./async-lotes.ts (`processingDelayMs`, default 0), its processing
 * issuing the notes (207 for an RPS dated outside dtInicio..dtFim) and keeping the RetornoEnvioLoteRPS the situation
 * query returns in ResultadoOperacao; 1105 for an unknown protocol (a reading: the manual's code for an unknown lote).
 */
export const SP_NS = 'http://www.prefeitura.sp.gov.br/nfe';
const ACTIONS: Record<string, string> = {
  EnvioRPSRequest: 'envioRPS',
  ConsultaNFeRequest: 'consultaNFe',
  CancelamentoNFeRequest: 'cancelamentoNFe',
};
const SCHEMAS = {
  EnvioRPSRequest: 'spEnvioRps',
  ConsultaNFeRequest: 'spConsultaNfe',
  CancelamentoNFeRequest: 'spCancelamentoNfe',
} as const;

interface Note {
  ccm: string;
  numero: string;
  codigo: string;
  chaveNacional: string;
  rpsKey: string;
  rpsXml: string;
  signature: string;
  prestador: string;
  emittedAt: string;
  cancelledAt: string | null;
}

type Evento = { codigo: string; descricao: string };

function retorno(root: string, sucesso: boolean, body = '', erros: Evento[] = [], alertas: Evento[] = []): string {
  const ev = (tag: string, list: Evento[]) =>
    list
      .map(
        (e) => `<${tag} xmlns=""><Codigo>${e.codigo}</Codigo><Descricao>${escapeXml(e.descricao)}</Descricao></${tag}>`,
      )
      .join('');
  return (
    `<${root} xmlns="${SP_NS}"><Cabecalho xmlns="" Versao="2"><Sucesso>${sucesso}</Sucesso></Cabecalho>` +
    `${ev('Alerta', alertas)}${ev('Erro', erros)}${body}</${root}>`
  );
}

/** A `RetornoEnvioLoteRPS`: the Retorno with `InformacoesLote` in its Cabecalho. */
function loteRetorno(
  root: string,
  sucesso: boolean,
  informacoes: string,
  body: string,
  erros: Evento[],
  alertas: Evento[],
): string {
  return retorno(root, sucesso, body, erros, alertas).replace(
    '</Sucesso></Cabecalho>',
    `</Sucesso>${informacoes}</Cabecalho>`,
  );
}

/** `tpEventoAsync` elements (Codigo, Descricao). */
const eventosAsync = (erros: Evento[]) =>
  erros
    .map((e) => `<Erro xmlns=""><Codigo>${e.codigo}</Codigo><Descricao>${escapeXml(e.descricao)}</Descricao></Erro>`)
    .join('');

/** The async service's answers: RetornoXML as elements (the WSDL's inline types), children unqualified. */
function asyncAnswer(response: string, retornoXml: string): SandboxReply {
  return soapAnswer(`<${response} xmlns="${SP_NS}"><RetornoXML>${retornoXml}</RetornoXML></${response}>`);
}

const ASYNC_ACTIONS: Record<string, { action: string; response: string }> = {
  EnvioLoteRPSRequest: { action: 'envioLoteRPSAsync', response: 'EnvioLoteRPSResponseAsync' },
  TesteEnvioLoteRPSRequest: { action: 'testeEnvioLoteRPSAsync', response: 'TesteEnvioLoteRPSResponseAsync' },
  ConsultaSituacaoLoteRequest: { action: 'consultaSituacaoLote', response: 'ConsultaSituacaoLoteResponse' },
};

export interface SaoPauloSandboxOptions {
  /** how long a received async lote waits before it is processed (0: by the next request) */
  processingDelayMs?: number;
}

function answer(operation: string, xml: string): SandboxReply {
  const name = operation.replace(/Request$/, 'Response');
  return soapAnswer(`<${name} xmlns="${SP_NS}"><RetornoXML>${escapeXml(xml)}</RetornoXML></${name}>`);
}

const RETURN_ROOT: Record<string, string> = {
  EnvioRPSRequest: 'RetornoEnvioRPS',
  ConsultaNFeRequest: 'RetornoConsulta',
  CancelamentoNFeRequest: 'RetornoCancelamentoNFe',
};

export function createSaoPauloService(
  deps: MunicipalSandboxDependencies,
  options: SaoPauloSandboxOptions = {},
): SandboxService {
  const notes = new Map<string, Note>(); // env:ccm:numero
  const byRps = new Map<string, string>(); // env:rpsKey → note key
  const counters = new Map<string, number>();

  const chaveNfe = (n: Note) =>
    `<ChaveNFe><InscricaoPrestador>${n.ccm}</InscricaoPrestador><NumeroNFe>${n.numero}</NumeroNFe>` +
    `<CodigoVerificacao>${n.codigo}</CodigoVerificacao><ChaveNotaNacional>${n.chaveNacional}</ChaveNotaNacional></ChaveNFe>`;

  function nfeXml(n: Note): string {
    const rps = parseDom(n.rpsXml).documentElement!;
    const t = (path: string) => escapeXml(textAt(rps, path) ?? '');
    return (
      `<NFe xmlns="">${chaveNfe(n)}<DataEmissaoNFe>${n.emittedAt}</DataEmissaoNFe>` +
      `<ChaveRPS><InscricaoPrestador>${n.ccm}</InscricaoPrestador><SerieRPS>${t('ChaveRPS/SerieRPS')}</SerieRPS>` +
      `<NumeroRPS>${t('ChaveRPS/NumeroRPS')}</NumeroRPS></ChaveRPS><TipoRPS>RPS</TipoRPS>` +
      `<DataEmissaoRPS>${t('DataEmissao')}</DataEmissaoRPS><DataFatoGeradorNFe>${n.emittedAt}</DataFatoGeradorNFe>` +
      `<CPFCNPJPrestador><CNPJ>${n.prestador}</CNPJ></CPFCNPJPrestador><RazaoSocialPrestador>PRESTADOR</RazaoSocialPrestador>` +
      `<EnderecoPrestador/><StatusNFe>${n.cancelledAt ? 'C' : 'N'}</StatusNFe>` +
      (n.cancelledAt ? `<DataCancelamento>${n.cancelledAt}</DataCancelamento>` : '') +
      `<TributacaoNFe>${t('TributacaoRPS')}</TributacaoNFe><OpcaoSimples>0</OpcaoSimples>` +
      `<ValorServicos>${t('ValorFinalCobrado')}</ValorServicos><CodigoServico>${t('CodigoServico')}</CodigoServico>` +
      `<AliquotaServicos>${t('AliquotaServicos')}</AliquotaServicos><ValorISS>0</ValorISS><ValorCredito>0</ValorCredito>` +
      `<ISSRetido>${t('ISSRetido')}</ISSRetido><Discriminacao>${t('Discriminacao')}</Discriminacao>` +
      `<ValorFinalCobrado>${t('ValorFinalCobrado')}</ValorFinalCobrado></NFe>`
    );
  }

  function issue(env: string, rps: Element, rpsXml: string, prestador: string): Note {
    const ccm = textAt(rps, 'ChaveRPS/InscricaoPrestador') ?? '';
    const next = (counters.get(`${env}:${ccm}`) ?? 0) + 1;
    counters.set(`${env}:${ccm}`, next);
    const at = deps.now();
    const numero = String(next);
    const note: Note = {
      ccm,
      numero,
      codigo: randomBytes(6)
        .toString('base64url')
        .toUpperCase()
        .replace(/[^A-Z0-9]/g, 'X')
        .slice(0, 8),
      // a national key of the note's shape: cMun, ambGer 2, tpInsc 2, CNPJ, nNFSe 13, AAMM, code 9, DV
      chaveNacional: `355030822${prestador.padStart(14, '0')}${numero.padStart(13, '0')}${at.toISOString().slice(2, 4)}${at.toISOString().slice(5, 7)}${String(next).padStart(9, '0')}0`,
      rpsKey: `${ccm}:${textAt(rps, 'ChaveRPS/SerieRPS') ?? ''}:${textAt(rps, 'ChaveRPS/NumeroRPS') ?? ''}`,
      rpsXml,
      signature: textAt(rps, 'Assinatura') ?? '',
      prestador,
      emittedAt: at.toISOString().slice(0, 19),
      cancelledAt: null,
    };
    notes.set(`${env}:${ccm}:${numero}`, note);
    byRps.set(`${env}:${note.rpsKey}`, `${env}:${ccm}:${numero}`);
    deps.logger.info(`sandbox São Paulo: NF-e ${numero} issued for RPS ${note.rpsKey}`);
    return note;
  }

  /** The checks every Pedido passes: version, XSD, message signature, remetente = TLS certificate. */
  function pedidoOf(
    req: SandboxRequest,
    operation: keyof typeof SCHEMAS,
    element: Element,
  ): { ok: true; root: Element; xml: string; certificate: X509Certificate } | { ok: false; erros: Evento[] } {
    return checkedPedido(req, element, {
      versao: 'VersaoSchema',
      schema: (xml) => schemaErrors(SCHEMAS[operation], xml),
      signed: true,
    });
  }

  /**
   * The checks every Pedido passes: version parameter (and Cabecalho@Versao when there is one) = 2 (1002), the XSD
   * (1001), the enveloped message signature when the schema has one (1057), CPFCNPJRemetente = the TLS
   * certificate (1100).
   */
  function checkedPedido(
    req: SandboxRequest,
    element: Element,
    spec: { versao: string; schema: (xml: string) => string | null; signed: boolean },
  ): { ok: true; root: Element; xml: string; certificate: X509Certificate } | { ok: false; erros: Evento[] } {
    const versao = stringParameter(element, spec.versao, SP_NS);
    const xml = stringParameter(element, 'MensagemXML', SP_NS);
    let root: Element | null;
    try {
      root = parseDom(xml).documentElement;
    } catch (err) {
      return {
        ok: false,
        erros: [{ codigo: '1001', descricao: `XML não compatível com Schema. ${(err as Error).message}` }],
      };
    }
    const cabecalho = root ? child(root, 'Cabecalho') : null;
    if (!root || versao !== '2' || (cabecalho && cabecalho.getAttribute('Versao') !== '2')) {
      return { ok: false, erros: [{ codigo: '1002', descricao: 'Versão do Schema XML Incorreto.' }] };
    }
    const problems = spec.schema(xml);
    if (problems)
      return { ok: false, erros: [{ codigo: '1001', descricao: `XML não compatível com Schema. ${problems}` }] };
    const tls = req.clientCertificate ? readIcpBrasilIdentity(req.clientCertificate.raw) : null;
    const remetenteOf = (base: string) =>
      textAt(root, `${base}CPFCNPJRemetente/CNPJ`) ?? textAt(root, `${base}CPFCNPJRemetente/CPF`);
    const remetente = cabecalho ? remetenteOf('Cabecalho/') : remetenteOf('');
    const remetenteRefused = {
      ok: false as const,
      erros: [
        {
          codigo: '1100',
          descricao:
            'O CNPJ do usuário autorizado a enviar a mensagem XML não confere com o CNPJ usado na comunicação.',
        },
      ],
    };
    if (!spec.signed) {
      if (!tls || !remetente || (tls.cnpj ?? tls.cpf) !== remetente) return remetenteRefused;
      return { ok: true, root, xml, certificate: new X509Certificate(req.clientCertificate!.raw) };
    }
    const signature = childElements(root).find((e) => e.localName === 'Signature' && e.namespaceURI === XMLDSIG_NS);
    const method = at(signature, 'SignedInfo/SignatureMethod')?.getAttribute('Algorithm');
    const verified = verifyDocumentSignature(xml, root);
    if (!verified.ok || method !== 'http://www.w3.org/2000/09/xmldsig#rsa-sha1') {
      return { ok: false, erros: [{ codigo: '1057', descricao: 'Rejeição: Assinatura difere do calculado.' }] };
    }
    if (!tls || !remetente || (tls.cnpj ?? tls.cpf) !== remetente || verified.identity.cnpj !== tls.cnpj) {
      return remetenteRefused;
    }
    return { ok: true, root, xml, certificate: new X509Certificate(req.clientCertificate!.raw) };
  }

  /** The checks of one RPS (the same in EnvioRPS and in a lote). */
  function rpsErrors(rps: Element, certificate: X509Certificate): Evento[] {
    const erros: Evento[] = [];
    if (child(rps, 'ValorInicialCobrado')) erros.push({ codigo: '640', descricao: 'Informe ValorFinalCobrado.' });
    if (textAt(rps, 'TributacaoRPS') === 'T' && child(rps, 'MunicipioPrestacao')) {
      erros.push({ codigo: '1223', descricao: 'Município de prestação não deve ser informado para tributação T.' });
    }
    const code = textAt(rps, 'CodigoServico') ?? '';
    if (Number(code) < 1000) {
      erros.push({ codigo: '306', descricao: `Código do Serviço Prestado ${code} do RPS inexistente.` });
    }
    if (!stringSignatureVerifies(rpsStringOf(rps), textAt(rps, 'Assinatura'), certificate)) {
      erros.push({ codigo: '1206', descricao: 'Assinatura Digital do RPS incorreta.' });
    }
    return erros;
  }

  /** A checked RPS becomes a note: the same one for an identical re-send, a new one (alert 217) otherwise. */
  function substitute(
    env: string,
    rps: Element,
    rpsXml: string,
    prestador: string,
  ): { body: string; alertas: Evento[] } {
    const key = `${textAt(rps, 'ChaveRPS/InscricaoPrestador')}:${textAt(rps, 'ChaveRPS/SerieRPS') ?? ''}:${textAt(rps, 'ChaveRPS/NumeroRPS')}`;
    const previousKey = byRps.get(`${env}:${key}`);
    const previous = previousKey ? notes.get(previousKey) : undefined;
    const chaveRps = `<ChaveRPS>${rootElementText(rpsXml, 'ChaveRPS').replace(/^<ChaveRPS>|<\/ChaveRPS>$/g, '')}</ChaveRPS>`;
    const body = (n: Note) => `<ChaveNFeRPS xmlns="">${chaveNfe(n)}${chaveRps}</ChaveNFeRPS>`;
    if (previous && !previous.cancelledAt && previous.rpsXml === rpsXml) return { body: body(previous), alertas: [] };
    const alertas: Evento[] = [];
    if (previous && !previous.cancelledAt) {
      previous.cancelledAt = deps.now().toISOString().slice(0, 19);
      alertas.push({
        codigo: '217',
        descricao: `RPS reenviado. A NF-e (${previous.numero}) referente ao RPS foi cancelada e uma nova NF-e foi emitida.`,
      });
    }
    return { body: body(issue(env, rps, rpsXml, prestador)), alertas };
  }

  function envioRps(env: string, root: Element, xml: string, certificate: X509Certificate, prestador: string): string {
    const R = 'RetornoEnvioRPS';
    const rps = child(root, 'RPS')!;
    const erros = rpsErrors(rps, certificate);
    if (erros.length > 0) return retorno(R, false, '', erros);
    const done = substitute(env, rps, rootElementText(xml.slice(xml.indexOf('<RPS')), 'RPS'), prestador);
    return retorno(R, true, done.body, [], done.alertas);
  }

  const lotes = createLoteQueue({
    now: deps.now,
    processingDelayMs: options.processingDelayMs ?? 0,
    logger: deps.logger,
    process: (lote) => processLote(lote),
  });

  /**
   * A received lote processed (§1.4): every RPS checked (and its DataEmissao within dtInicio..dtFim, 207); with
   * `transacao` (default true) one error issues nothing, otherwise the valid RPS become notes. The result is the
   * `RetornoEnvioLoteRPS` the situation query carries in ResultadoOperacao.
   */
  function processLote(lote: ReceivedLote): string {
    const root = parseDom(lote.xml).documentElement!;
    const inicio = textAt(root, 'Cabecalho/dtInicio') ?? '';
    const fim = textAt(root, 'Cabecalho/dtFim') ?? '';
    const transacao = textAt(root, 'Cabecalho/transacao') !== 'false';
    const all = childElements(root).filter((e) => e.localName === 'RPS');
    const texts = rpsTexts(lote.xml);
    const checked = all.map((rps) => {
      const erros = rpsErrors(rps, lote.certificate);
      const dia = textAt(rps, 'DataEmissao') ?? '';
      if (dia < inicio || dia > fim) {
        erros.push({
          codigo: '207',
          descricao: `Data de Emissão do RPS não está compreendida entre ${inicio} e ${fim} conforme especificado no cabeçalho da mensagem XML.`,
        });
      }
      return { rps, erros };
    });
    const erros = checked.flatMap((c) => c.erros);
    const R = 'RetornoEnvioLoteRPS';
    const informacoes = (issued: number) =>
      `<InformacoesLote><NumeroLote>${lote.numero}</NumeroLote><InscricaoPrestador>${textAt(all[0], 'ChaveRPS/InscricaoPrestador') ?? '0'}</InscricaoPrestador>` +
      `<CPFCNPJRemetente>${rootElementText(lote.xml, 'CPFCNPJRemetente').replace(/^<CPFCNPJRemetente[^>]*>|<\/CPFCNPJRemetente>$/g, '')}</CPFCNPJRemetente>` +
      `<DataEnvioLote>${lote.receivedAt}</DataEnvioLote><QtdNotasProcessadas>${issued}</QtdNotasProcessadas>` +
      '<TempoProcessamento>1</TempoProcessamento><ValorTotalServicos>0</ValorTotalServicos></InformacoesLote>';
    if (transacao && erros.length > 0) return loteRetorno(R, false, informacoes(0), '', erros, []);
    const results = checked
      .map((c, i) => (c.erros.length === 0 ? substitute(lote.env, c.rps, texts[i]!, lote.prestador) : null))
      .filter((r) => r !== null);
    return loteRetorno(
      R,
      erros.length === 0,
      informacoes(results.length),
      results.map((r) => r.body).join(''),
      erros,
      results.flatMap((r) => r.alertas),
    );
  }

  /**
   * EnvioLoteRpsAsync / TesteEnvioLoteRpsAsync: the Pedido checked on receipt (1002, 1001 against
   * PedidoEnvioLoteRPSAsync_v02.xsd, 1057, 1100); a lote received answers `InformacoesLote{NumeroProtocolo,
   * DataRecebimento}` and waits in the queue; the test operation checks the RPS and issues nothing.
   */
  function envioLoteAsync(req: SandboxRequest, element: Element, env: string, teste: boolean): string {
    const pedido = checkedPedido(req, element, {
      versao: 'versaoSchema',
      schema: (xml) => asyncSchemaErrors('lote', xml),
      signed: true,
    });
    const cabecalho = (sucesso: boolean, informacoes = '') =>
      `<Cabecalho xmlns="" Versao="2"><Sucesso>${sucesso}</Sucesso>${informacoes}</Cabecalho>`;
    if (!pedido.ok) return cabecalho(false) + eventosAsync(pedido.erros);
    // reception runs the RPS checks (the Teste operation's); a transactional lote with an error is refused here
    const erros = childElements(pedido.root)
      .filter((e) => e.localName === 'RPS')
      .flatMap((rps) => rpsErrors(rps, pedido.certificate));
    const transacao = textAt(pedido.root, 'Cabecalho/transacao') !== 'false';
    if (teste || (transacao && erros.length > 0)) return cabecalho(erros.length === 0) + eventosAsync(erros);
    const lote = lotes.receive({
      env,
      xml: pedido.xml,
      certificate: pedido.certificate,
      prestador: readIcpBrasilIdentity(req.clientCertificate!.raw).cnpj ?? '',
      remetente: textAt(pedido.root, 'Cabecalho/CPFCNPJRemetente/CNPJ') ?? '',
    });
    return cabecalho(
      true,
      `<InformacoesLote><NumeroProtocolo>${lote.protocolo}</NumeroProtocolo><DataRecebimento>${lote.receivedAt}</DataRecebimento></InformacoesLote>`,
    );
  }

  /**
   * ConsultaSituacaoLoteSync: the lote's `Situacao` (int, attribute `nome`), NumeroLote, DataRecebimento and, once
   * processed, DataProcessamento and ResultadoOperacao (the RetornoEnvioLoteRPS as a string); 1105 for a protocol
   * of another remetente or environment, or none.
   */
  function consultaSituacao(req: SandboxRequest, element: Element, env: string): string {
    const pedido = checkedPedido(req, element, {
      versao: 'versaoSchema',
      schema: (xml) => asyncSchemaErrors('situacao', xml),
      signed: false,
    });
    const refused = (erros: Evento[]) => `<Sucesso xmlns="">false</Sucesso>${eventosAsync(erros)}`;
    if (!pedido.ok) return refused(pedido.erros);
    const found = lotes.situacao(textAt(pedido.root, 'NumeroProtocolo') ?? '');
    const remetente = textAt(pedido.root, 'CPFCNPJRemetente/CNPJ') ?? textAt(pedido.root, 'CPFCNPJRemetente/CPF');
    if (!found || found.lote.env !== env || found.lote.remetente !== remetente) {
      return refused([{ codigo: '1105', descricao: 'Lote não encontrado.' }]);
    }
    const { lote, situacao } = found;
    return (
      `<Sucesso xmlns="">true</Sucesso><Situacao xmlns="" nome="${situacao}">${SITUACOES[situacao]}</Situacao>` +
      `<NumeroLote xmlns="">${lote.numero}</NumeroLote><DataRecebimento xmlns="">${lote.receivedAt}</DataRecebimento>` +
      (lote.resultado !== null
        ? `<DataProcessamento xmlns="">${lote.processedAt}</DataProcessamento>` +
          `<ResultadoOperacao xmlns="">${escapeXml(lote.resultado)}</ResultadoOperacao>`
        : '')
    );
  }

  function asyncRoute(req: SandboxRequest): SandboxReply {
    const env = req.params.ambiente === 'producao' ? '1' : '2';
    if (!req.clientCertificate) return soapFault(403, 'soap:Client', 'Certificado digital do cliente ausente.');
    try {
      const request = readSoapRequest(req.body);
      const known = ASYNC_ACTIONS[request.operation];
      if (request.namespace !== SP_NS || !known) {
        return soapFault(500, 'soap:Client', `Operação desconhecida: {${request.namespace}}${request.operation}.`);
      }
      const soapAction = String(req.headers.soapaction ?? '').replace(/"/g, '');
      if (soapAction !== `${SP_NS}/ws/${known.action}`) {
        return soapFault(
          500,
          'soap:Client',
          `Server did not recognize the value of HTTP Header SOAPAction: ${soapAction}.`,
        );
      }
      lotes.settle();
      const retornoXml =
        request.operation === 'ConsultaSituacaoLoteRequest'
          ? consultaSituacao(req, request.element, env)
          : envioLoteAsync(req, request.element, env, request.operation === 'TesteEnvioLoteRPSRequest');
      return asyncAnswer(known.response, retornoXml);
    } catch (err) {
      if (err instanceof SoapClientError) return soapFault(500, 'soap:Client', err.message);
      throw err;
    }
  }

  function consulta(env: string, root: Element): string {
    const R = 'RetornoConsulta';
    const found: Note[] = [];
    for (const detalhe of childElements(root).filter((e) => e.localName === 'Detalhe')) {
      const rps = child(detalhe, 'ChaveRPS');
      const key = rps
        ? byRps.get(
            `${env}:${textAt(rps, 'InscricaoPrestador')}:${textAt(rps, 'SerieRPS') ?? ''}:${textAt(rps, 'NumeroRPS')}`,
          )
        : `${env}:${textAt(detalhe, 'ChaveNFe/InscricaoPrestador')}:${textAt(detalhe, 'ChaveNFe/NumeroNFe')}`;
      const note = key ? notes.get(key) : undefined;
      if (note) found.push(note);
    }
    if (found.length === 0) return retorno(R, false, '', [{ codigo: '1106', descricao: 'NF-e não encontrada.' }]);
    return retorno(R, true, found.map(nfeXml).join(''));
  }

  function cancelamento(env: string, root: Element, certificate: X509Certificate): string {
    const R = 'RetornoCancelamentoNFe';
    const alertas: Evento[] = [];
    for (const detalhe of childElements(root).filter((e) => e.localName === 'Detalhe')) {
      if (
        !stringSignatureVerifies(cancellationStringOf(detalhe), textAt(detalhe, 'AssinaturaCancelamento'), certificate)
      ) {
        return retorno(R, false, '', [{ codigo: '1305', descricao: 'Assinatura de cancelamento da NF-e incorreta.' }]);
      }
      const note = notes.get(
        `${env}:${textAt(detalhe, 'ChaveNFe/InscricaoPrestador')}:${textAt(detalhe, 'ChaveNFe/NumeroNFe')}`,
      );
      if (!note) return retorno(R, false, '', [{ codigo: '1106', descricao: 'NF-e não encontrada.' }]);
      if (note.cancelledAt) {
        alertas.push({ codigo: '1301', descricao: `NF-e já cancelada em ${note.cancelledAt}.` });
        continue;
      }
      note.cancelledAt = deps.now().toISOString().slice(0, 19);
      deps.logger.info(`sandbox São Paulo: NF-e ${note.numero} cancelled`);
    }
    return retorno(R, true, '', [], alertas);
  }

  return {
    family: 'sao-paulo-isssaopaulo',
    name: 'São Paulo (NF-e Paulistana)',
    mount: '/municipal/isssaopaulo/:ambiente(producao|producaorestrita)',
    routes: [
      { name: 'lotenfeasync', method: 'POST', path: '/lotenfeasync.asmx', handler: asyncRoute },
      {
        name: 'lotenfe',
        method: 'POST',
        path: '/',
        handler(req) {
          const env = req.params.ambiente === 'producao' ? '1' : '2';
          if (!req.clientCertificate) return soapFault(403, 'soap:Client', 'Certificado digital do cliente ausente.');
          try {
            const request = readSoapRequest(req.body);
            const action = ACTIONS[request.operation];
            if (request.namespace !== SP_NS || !action) {
              return soapFault(
                500,
                'soap:Client',
                `Operação desconhecida: {${request.namespace}}${request.operation}.`,
              );
            }
            const soapAction = String(req.headers.soapaction ?? '').replace(/"/g, '');
            if (soapAction !== `${SP_NS}/ws/${action}`) {
              return soapFault(
                500,
                'soap:Client',
                `Server did not recognize the value of HTTP Header SOAPAction: ${soapAction}.`,
              );
            }
            const operation = request.operation as keyof typeof SCHEMAS;
            lotes.settle(); // a lote due is processed before a consultation can look for its notes
            const pedido = pedidoOf(req, operation, request.element);
            if (!pedido.ok) return answer(operation, retorno(RETURN_ROOT[operation]!, false, '', pedido.erros));
            const prestador = readIcpBrasilIdentity(req.clientCertificate.raw).cnpj ?? '';
            switch (operation) {
              case 'EnvioRPSRequest':
                return answer(operation, envioRps(env, pedido.root, pedido.xml, pedido.certificate, prestador));
              case 'ConsultaNFeRequest':
                return answer(operation, consulta(env, pedido.root));
              default:
                return answer(operation, cancelamento(env, pedido.root, pedido.certificate));
            }
          } catch (err) {
            if (err instanceof SoapClientError) return soapFault(500, 'soap:Client', err.message);
            throw err;
          }
        },
      },
    ],
    notFound: (req) => soapFault(404, 'soap:Client', `Serviço não encontrado: ${req.method} ${req.subPath}`),
    errorReply: (_req, err) => soapFault(500, 'soap:Server', err.message),
    faults: {
      errorReply: () => soapFault(500, 'soap:Server', 'Falha simulada pelo sandbox.'),
      isWrite: (req) => /EnvioRPSRequest|EnvioLoteRPSRequest|CancelamentoNFeRequest/.test(req.body.toString('utf8')),
    },
  };
}

/** The São Paulo entry of the municipal sandboxes (../municipal.ts). */
export const saoPauloSandbox = {
  engine: 'sao-paulo:isssaopaulo',
  slug: 'isssaopaulo',
  create: createSaoPauloService,
} satisfies MunicipalSandbox;
