import { child, children, outerXml, parseXmlDocument, text } from '../../xml/read.ts';
import { signXml } from '../../xml/sign.ts';
import { defineFamily, type OperationRequest, type SendContext } from '../kit/family.ts';
import { readSoapAnswer, soapEnvelope } from '../kit/soap.ts';
import type { CancellationRecord, IssuedDocument, Outcome } from '../types.ts';
import {
  buildPedidoCancelamentoNfe,
  buildPedidoConsultaNfe,
  buildPedidoEnvioRps,
  rpsKeyId,
  rpsKeyOf,
  SP_NAMESPACE,
} from './messages.ts';

/**
 * City of São Paulo, NF-e Paulistana layout v02 (registry provider `ISSSaoPaulo`, briefs/providers-own.md §1;
 * manual NFe_Web_Service v3.3.5; schemas-reformatributaria-v02-4 in schemas/sao-paulo/v02/). Synchronous
 * `lotenfe.asmx` (.NET ASMX document/literal, SOAP 1.1 with SOAPAction `http://www.prefeitura.sp.gov.br/nfe/ws/<op>`):
 * `<XRequest><VersaoSchema>2</VersaoSchema><MensagemXML>escaped XML</MensagemXML>`, answer
 * `<XResponse><RetornoXML>escaped XML</RetornoXML>`. mTLS with the ICP-Brasil certificate whose CNPJ is the
 * `CPFCNPJRemetente` (error 1100). Every Pedido is signed enveloped over the whole root (`URI=""`, RSA-SHA1, C14N).
 *
 * Readings chosen for the brief's unknowns (§1.10) and open points (the sandbox accepts only these):
 * - EnvioRPS (one RPS per message, synchronous) is the emission; the asynchronous lote flow is not used;
 * - amount: `ValorFinalCobrado` only (ValorInicialCobrado is refused with 640 by the live service, [FIELD-SP]); the
 *   RPS signature string is the manual's v2 string (CCM 12 digits, ValorFinalCobrado in cents; 90 characters
 *   without intermediary or NIF); a NaoNIF taker signs indicator 4 + 14 zeros + the NaoNIF digit (manual example);
 * - `MunicipioPrestacao` only when TributacaoRPS is F (error 1223 for T); TributacaoRPS T when the service is in
 *   São Paulo, F otherwise;
 * - the cancellation signature is CCM **8** digits + NF-e number 12 digits; a CCM with more than 8 significant
 *   digits is refused up front (how SP signs it is unknown, §1.10 item 4);
 * - codigoServico: `servico.codigoServico` or the project's `codigoServicoSp` (the table is unpublished, §1.9);
 * - alert 217 (RPS re-sent: the old note cancelled, a new one issued) → unknown, reconciled by ConsultaNFe on the
 *   ChaveRPS, which holds the note in force; 215 (duplicate RPS in one message) likewise; 1106 on a consultation
 *   → none; alert 1301 on a cancellation → "already cancelled", believed only once ConsultaNFe by ChaveNFe (CCM +
 *   number) shows the note with StatusNFe C (the cancellation query; DataCancelamento read as São Paulo time);
 * - PDF: the city portal (no official URL, §1.8): ACBr's `ProLinkURL` `nfe.aspx?ccm=&nf=&cod=`.
 */
const ACTION_BASE = 'http://www.prefeitura.sp.gov.br/nfe/ws/';
export const SP_PORTAL = 'https://nfe.prefeitura.sp.gov.br/nfe.aspx';

function call(operation: string, action: string, xml: string, context: SendContext): OperationRequest {
  const { body, headers } = soapEnvelope({
    version: '1.1',
    namespace: SP_NAMESPACE,
    operation: `${operation}Request`,
    parts: [
      { name: 'VersaoSchema', value: '2', encoding: 'escaped', qualified: true },
      { name: 'MensagemXML', value: xml, encoding: 'escaped', qualified: true },
    ],
    soapAction: `${ACTION_BASE}${action}`,
  });
  return { method: 'POST', url: context.endpoints.url('emit', context.ambiente, context.municipality), headers, body };
}

function sign(xml: string, context: SendContext): string {
  return signXml(xml, {
    key: { privateKey: context.certificate.privateKey, certificatePem: context.certificate.certPem },
    algorithm: 'rsa-sha1',
  });
}

const senderOf = (context: { certificate: { cnpj: string | null; cpf: string | null } }, fallback = '') =>
  context.certificate.cnpj ?? context.certificate.cpf ?? fallback;

interface Evento {
  Codigo: string;
  Descricao: string;
}

type Retorno = { kind: 'read'; root: Element; sucesso: boolean; erros: Evento[]; alertas: Evento[] };

/** The provider's Retorno (escaped string in RetornoXML), or the outcome of a fault / unreadable answer. */
function retornoOf(answer: { status: number; body: string }, write: boolean): Retorno | Outcome<never> {
  const lost = (reason: string): Outcome<never> =>
    write ? { kind: 'unknown', reason } : { kind: 'transient', reason };
  const soap = readSoapAnswer(answer.body);
  if (soap.kind === 'fault') {
    return answer.status >= 500 && /Server/.test(soap.code)
      ? { kind: 'transient', reason: `SOAP fault ${soap.code}: ${soap.reason}` }
      : lost(`SOAP fault ${soap.code}: ${soap.reason}`);
  }
  if (soap.kind !== 'body' || !soap.result) return lost(`HTTP ${answer.status}: unreadable answer`);
  let root: Element | null;
  try {
    root = parseXmlDocument(soap.result, () => undefined).documentElement;
  } catch {
    return lost('RetornoXML is not XML');
  }
  if (!root) return lost('empty RetornoXML');
  const eventos = (name: string) =>
    children(root, name).map((e) => ({ Codigo: text(e, 'Codigo') ?? '', Descricao: text(e, 'Descricao') ?? '' }));
  return {
    kind: 'read',
    root,
    sucesso: text(root, 'Cabecalho/Sucesso') === 'true',
    erros: eventos('Erro'),
    alertas: eventos('Alerta'),
  };
}

function refused(retorno: Retorno): Outcome<never> {
  const errors = [...retorno.erros, ...retorno.alertas];
  const first = retorno.erros[0] ?? retorno.alertas[0];
  return {
    kind: 'rejected',
    errorCode: first?.Codigo || 'SP',
    errorMessage: first?.Descricao || 'Pedido recusado pela Prefeitura de São Paulo',
    errors,
  };
}

/** The note of a `ChaveNFe` (EnvioRPS answer) or of a `tpNFe` (consultation). */
/** `DataCancelamento` (São Paulo local time when it carries no offset), or now when absent or unreadable. */
function cancelledAtOf(value: string | null): Date {
  if (!value) return new Date();
  const at = new Date(/(Z|[+-]\d{2}:\d{2})$/.test(value) ? value : `${value}-03:00`);
  return Number.isNaN(at.getTime()) ? new Date() : at;
}

function issuedOf(chaveNfe: Element | null, xml: string, ambiente: 1 | 2, at: string | null): IssuedDocument | null {
  const numero = text(chaveNfe, 'NumeroNFe');
  if (!numero) return null;
  const emitted = new Date(at ?? Date.now());
  return {
    chave: text(chaveNfe, 'ChaveNotaNacional'),
    numero,
    verificationCode: text(chaveNfe, 'CodigoVerificacao'),
    emittedAt: Number.isNaN(emitted.getTime()) ? new Date() : emitted,
    xml,
    ambiente,
  };
}

export const saoPauloFamily = defineFamily({
  id: 'sao-paulo',
  provider: 'ISSSaoPaulo',
  layout: 'NF-e Paulistana v02 (PedidoEnvioRPS, SOAP ASMX)',
  transport: 'soap11',
  auth: 'mtls',
  capabilities: {
    cancel: true,
    substitution: false,
    batch: false,
    mode: 'sync',
    pdf: 'portal',
    homologation: false,
    reconcile: true,
  },
  check(project, invoice) {
    const errors: { field: string; message: string }[] = [];
    const ccm = (project.inscricaoMunicipal ?? '').replace(/\D/g, '');
    if (!/^\d{1,12}$/.test(ccm) || ccm.replace(/^0+/, '').length > 8) {
      errors.push({
        field: 'project.inscricaoMunicipal',
        message: 'the CCM (up to 8 significant digits: the cancellation signature takes 8) is required by São Paulo',
      });
    }
    if (!/^\d{4,5}$/.test(invoice.servico.codigoServicoMunicipal ?? '')) {
      errors.push({
        field: 'servico.codigoServico',
        message: "São Paulo's service code (4 or 5 digits) is required: send it or set the project's codigoServicoSp",
      });
    }
    if (!invoice.ibscbs && !invoice.servico.nbs) {
      errors.push({ field: 'servico.nbs', message: 'required by São Paulo v2 (NBS, error 286)' });
    }
    if (!invoice.ibscbs) {
      errors.push({
        field: 'ibscbs',
        message: 'São Paulo v2 requires the IBS/CBS group (indicadorOperacao, classificacaoTributaria)',
      });
    }
    if (invoice.servico.localPrestacao.kind === 'pais' || invoice.exportacao) {
      errors.push({ field: 'servico.localPrestacao', message: 'services abroad are not sent to São Paulo yet' });
    }
    return errors;
  },
  declaration: {
    build: (input) => {
      const ccm = (input.project.inscricaoMunicipal ?? '').replace(/\D/g, '');
      return {
        id: rpsKeyId({ ccm, serie: input.serie, numero: String(input.number) }),
        xml: buildPedidoEnvioRps({
          project: input.project,
          invoice: input.invoice,
          serie: input.serie,
          numero: input.number,
          issuedAt: input.issuedAt,
          privateKey: input.certificate.privateKey,
          remetente: senderOf(input, input.project.cnpj),
        }),
      };
    },
    signedElement: 'PedidoEnvioRPS',
    signature: { reference: 'document', placement: 'root-end' },
    schema: 'spEnvioRps',
    schemaErrorCode: 'NFSE_SCHEMA_INVALID',
  },
  operations: {
    emit: {
      request: (document, context) => call('EnvioRPS', 'envioRPS', document.xml, context),
      parse(answer, _document, context): Outcome<IssuedDocument> {
        const retorno = retornoOf(answer, true);
        if (retorno.kind !== 'read') return retorno;
        const codes = [...retorno.erros, ...retorno.alertas].map((e) => e.Codigo);
        // 217: the RPS was re-sent (the old note cancelled, a new one issued); 215: duplicate: reconcile
        if (codes.includes('217') || codes.includes('215')) return refused({ ...retorno, erros: retorno.alertas });
        if (!retorno.sucesso) return refused(retorno);
        const issued = issuedOf(
          child(retorno.root, 'ChaveNFeRPS/ChaveNFe'),
          outerXml(retorno.root),
          context.ambiente,
          null,
        );
        return issued ? { kind: 'ok', value: issued } : { kind: 'unknown', reason: 'RetornoEnvioRPS without ChaveNFe' };
      },
    },
    query: {
      request: (document, context) =>
        call(
          'ConsultaNFe',
          'consultaNFe',
          sign(buildPedidoConsultaNfe(senderOf(context), { rps: rpsKeyOf(document.id) }), context),
          context,
        ),
      parse(answer, _document, context): Outcome<IssuedDocument | null> {
        const retorno = retornoOf(answer, false);
        if (retorno.kind !== 'read') return retorno;
        if (retorno.erros.some((e) => e.Codigo === '1106')) return { kind: 'ok', value: null };
        if (!retorno.sucesso) return refused(retorno);
        const nfe = children(retorno.root, 'NFe')[0];
        if (!nfe) return { kind: 'ok', value: null };
        const issued = issuedOf(child(nfe, 'ChaveNFe'), outerXml(nfe), context.ambiente, text(nfe, 'DataEmissaoNFe'));
        return issued ? { kind: 'ok', value: issued } : { kind: 'transient', reason: 'NFe without NumeroNFe' };
      },
    },
    cancel: {
      message: {
        build: ({ issued, certificate }) => ({
          id: issued.numero ?? '',
          xml: buildPedidoCancelamentoNfe(
            certificate.cnpj ?? certificate.cpf ?? issued.providerCnpj,
            issued.inscricaoMunicipal ?? '',
            issued.numero ?? '',
            certificate.privateKey,
          ),
        }),
        signedElement: 'PedidoCancelamentoNFe',
        signature: { reference: 'document', placement: 'root-end' },
        schema: 'spCancelamentoNfe',
        schemaErrorCode: 'EVENT_SCHEMA_INVALID',
      },
      operation: {
        request: ({ signed }, context) => call('CancelamentoNFe', 'cancelamentoNFe', signed, context),
        parse(answer): Outcome<CancellationRecord> {
          const retorno = retornoOf(answer, true);
          if (retorno.kind !== 'read') return retorno;
          // alert 1301: "NF-e já cancelada em <data>"
          if (retorno.alertas.some((a) => a.Codigo === '1301')) return refused({ ...retorno, erros: retorno.alertas });
          if (!retorno.sucesso) return refused(retorno);
          return { kind: 'ok', value: { xml: outerXml(retorno.root), cancelledAt: new Date() } };
        },
      },
    },
    queryCancellation: {
      // ConsultaNFe by ChaveNFe (CCM + number): the note with StatusNFe C and its DataCancelamento
      request: (issued, context) =>
        call(
          'ConsultaNFe',
          'consultaNFe',
          sign(
            buildPedidoConsultaNfe(senderOf(context), {
              nfe: { ccm: (issued.inscricaoMunicipal ?? '').replace(/\D/g, ''), numero: issued.numero ?? '' },
            }),
            context,
          ),
          context,
        ),
      parse(answer): Outcome<CancellationRecord | null> {
        const retorno = retornoOf(answer, false);
        if (retorno.kind !== 'read') return retorno;
        if (retorno.erros.some((e) => e.Codigo === '1106')) return { kind: 'ok', value: null };
        if (!retorno.sucesso) return refused(retorno);
        const nfe = children(retorno.root, 'NFe')[0];
        if (!nfe || text(nfe, 'StatusNFe') !== 'C') return { kind: 'ok', value: null };
        return { kind: 'ok', value: { cancelledAt: cancelledAtOf(text(nfe, 'DataCancelamento')), xml: outerXml(nfe) } };
      },
    },
  },
  pdfLink: (issued) =>
    issued.inscricaoMunicipal && issued.numero && issued.verificationCode
      ? `${SP_PORTAL}?ccm=${issued.inscricaoMunicipal.replace(/\D/g, '')}&nf=${issued.numero}&cod=${issued.verificationCode}`
      : null,
  alreadyProcessedCodes: ['217', '215'],
  alreadyCancelledCodes: ['1301'],
});
