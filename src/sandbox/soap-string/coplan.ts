import { join } from 'node:path';
import { readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import type { SandboxRequest, SandboxService } from '../kit/server.ts';
import { at, child, childElements, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import { verifyEnvelopedSignature } from '../kit/xml-signature.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import { expectedDpsId, inscricaoOf, inscricaoRoot, readDps } from '../sefin/dps.ts';
import { type Ambiente, type IssuedRecord, SefinStore } from '../sefin/store.ts';
import { brasiliaDateTime } from '../sefin/time.ts';
import {
  dpsRuleErrors,
  issueNfse,
  type Mensagem,
  NFSE_NS,
  readSoapRequest,
  rootElementText,
  SoapClientError,
  schemaErrors,
  soapAnswer,
  soapFault,
  stringParameter,
  withoutDeclaration,
} from './common.ts';

/**
 * Coplan's GeneXus `anfse_ws` (briefs/providers-own.md §4): `<trib:nfse_web.OP><trib:OprequestLowercase>` in
 * namespace `Tributario` with the CDATA strings `nfseCabecMsg` and `nfseDadosMsg` in `Tributario_PRODUCAO_FULL`
 * (production) or `Tributario_HOMOLOGACAO_FULL` (homologation), SOAPAction `Tributarioaction/ANFSE_WEB.OP`, client
 * certificate required. It takes `GerarNfseEnvio{DPS}` (DPS_v1.01.xsd, signed on infDPS), the ABRASF-style
 * `CancelarNfseEnvio` signed on `InfPedidoCancelamento`, and the DPS / number-range consultations (the readings of the
 * engine's definition), answering `…Resposta` messages escaped in `<Outputxml>`.
 */

const SERVICE_NS = 'Tributario';
const DATA_NS = (env: Ambiente) => (env === 1 ? 'Tributario_PRODUCAO_FULL' : 'Tributario_HOMOLOGACAO_FULL');
const OPERATIONS = ['GERARNFSE', 'CANCELARNFSE', 'CONSULTARNFSEPORDPS', 'CONSULTARNFSEFAIXA'];
const CABECALHO =
  /^<cabecalho xmlns="http:\/\/www\.sped\.fazenda\.gov\.br\/nfse" versao="1\.01"><versaoDados>1\.01<\/versaoDados><\/cabecalho>$/;

function resposta(root: string, body: string, errors: Mensagem[] = []): string {
  const lista =
    errors.length === 0
      ? ''
      : `<ListaMensagemRetorno>${errors
          .map(
            (e) =>
              `<MensagemRetorno><Codigo>${escapeXml(e.codigo)}</Codigo><Mensagem>${escapeXml(e.descricao)}</Mensagem>` +
              `${e.correcao ? `<Correcao>${escapeXml(e.correcao)}</Correcao>` : ''}</MensagemRetorno>`,
          )
          .join('')}</ListaMensagemRetorno>`;
  return `<${root} xmlns="${NFSE_NS}">${body}${lista}</${root}>`;
}

function answer(operation: string, message: string) {
  const response = `${operation.charAt(0)}${operation.slice(1).toLowerCase()}response`;
  return soapAnswer(
    `<nfse_web.${operation}Response xmlns="${SERVICE_NS}"><${response}><Outputxml>${escapeXml(message)}</Outputxml></${response}></nfse_web.${operation}Response>`,
  );
}

function compNfse(record: IssuedRecord): string {
  const cancelamento = record.events.find((e) => e.tipoEvento === '101101');
  return `<CompNfse>${withoutDeclaration(record.nfseXml)}${cancelamento ? cancelamento.eventoXml : ''}</CompNfse>`;
}

export function createCoplanService(deps: MunicipalSandboxDependencies): SandboxService {
  const store = new SefinStore(deps.dataDir ? join(deps.dataDir, 'coplan', 'store.jsonl') : null, (m) =>
    deps.logger.warn(m),
  );
  const envOf = (req: SandboxRequest): Ambiente => (req.params.ambiente === 'producao' ? 1 : 2);
  const parse = (xml: string, rootName: string): Element => {
    let root: Element | null;
    try {
      root = parseDom(xml).documentElement;
    } catch (err) {
      throw new SoapClientError(`nfseDadosMsg mal formado: ${(err as Error).message}`);
    }
    if (root?.localName !== rootName || root.namespaceURI !== NFSE_NS) {
      throw new SoapClientError(`nfseDadosMsg: esperado ${rootName} (${NFSE_NS}).`);
    }
    return root;
  };

  function gerar(env: Ambiente, dados: string, transmitter: string | null): string {
    const fail = (errors: Mensagem[]) => resposta('GerarNfseResposta', '', errors);
    const at = deps.now();
    const envio = parse(dados, 'GerarNfseEnvio');
    const dpsElements = childElements(envio);
    if (dpsElements.length !== 1 || dpsElements[0].localName !== 'DPS') {
      return fail([{ codigo: 'E160', descricao: 'GerarNfseEnvio deve conter uma DPS.' }]);
    }
    // the DPS as a document of its own (it may inherit the namespace from GerarNfseEnvio)
    const raw = rootElementText(dados, 'DPS');
    const dpsXml = /^<DPS[^>]*\sxmlns="/.test(raw) ? raw : raw.replace('<DPS', `<DPS xmlns="${NFSE_NS}"`);
    const problems = schemaErrors('DPS', dpsXml);
    if (problems) return fail([{ codigo: 'E1235', descricao: problems }]);
    const dpsRoot = parseDom(dpsXml).documentElement!;
    const dps = readDps(dpsRoot);
    const verified = verifyEnvelopedSignature(dpsXml, dpsRoot, dps.infDps);
    if (!verified.ok) return fail([{ codigo: 'E0714', descricao: 'Assinatura inválida.', correcao: verified.detail }]);
    const emitente = inscricaoOf(dps.emitter);
    const signer = verified.value.identity.cnpj;
    if (!emitente || !signer || inscricaoRoot(signer) !== inscricaoRoot(emitente)) {
      return fail([{ codigo: 'E0718', descricao: 'O certificado da assinatura não é do emitente.' }]);
    }
    if (!transmitter || inscricaoRoot(transmitter) !== inscricaoRoot(emitente)) {
      return fail([{ codigo: 'E1200', descricao: 'O certificado de transmissão não é do emitente.' }]);
    }
    const errors = dpsRuleErrors(dps, env, at, store);
    if (expectedDpsId(dps) !== dps.id) errors.push({ codigo: 'E0004', descricao: `Id da DPS inválido: ${dps.id}.` });
    if (errors.length > 0) return fail(errors);
    const record = issueNfse({
      env,
      at,
      dps,
      dpsRaw: rootElementText(dados, 'DPS'),
      store,
      signer: deps.signer,
      registeredName: verified.value.identity.subjectCN.split(':')[0]?.trim() || null,
    });
    deps.logger.info(`sandbox Coplan: NFS-e ${record.chaveAcesso} issued for DPS ${dps.id} (ambiente ${env})`);
    return resposta(
      'GerarNfseResposta',
      `<DataRecebimento>${record.dhProc}</DataRecebimento><Protocolo>${record.nDFSe}</Protocolo><ListaNfse>${compNfse(record)}</ListaNfse>`,
    );
  }

  function cancelar(env: Ambiente, dados: string, transmitter: string | null): string {
    const fail = (errors: Mensagem[]) => resposta('CancelarNfseResposta', '', errors);
    const envio = parse(dados, 'CancelarNfseEnvio');
    const pedido = child(envio, 'Pedido');
    const inf = child(pedido, 'InfPedidoCancelamento');
    if (!pedido || !inf) return fail([{ codigo: 'E160', descricao: 'Esperado Pedido/InfPedidoCancelamento.' }]);
    const verified = verifyEnvelopedSignature(dados, pedido, inf);
    if (!verified.ok) return fail([{ codigo: 'E0714', descricao: 'Assinatura inválida.', correcao: verified.detail }]);
    const numero = textAt(inf, 'IdentificacaoNfse/Numero') ?? '';
    const cnpj = textAt(inf, 'IdentificacaoNfse/CpfCnpj/Cnpj') ?? '';
    const municipio = textAt(inf, 'IdentificacaoNfse/CodigoMunicipio') ?? '';
    const codigo = textAt(inf, 'CodigoCancelamento') ?? '';
    const signer = verified.value.identity.cnpj ?? '';
    if (!/^\d{14}$/.test(cnpj) || inscricaoRoot(signer) !== inscricaoRoot(cnpj)) {
      return fail([{ codigo: 'E0718', descricao: 'O certificado da assinatura não é do prestador da NFS-e.' }]);
    }
    if (!transmitter || inscricaoRoot(transmitter) !== inscricaoRoot(cnpj)) {
      return fail([{ codigo: 'E1200', descricao: 'O certificado de transmissão não é do prestador.' }]);
    }
    if (!/^[1-5]$/.test(codigo)) return fail([{ codigo: 'E160', descricao: `CodigoCancelamento ${codigo} inválido.` }]);
    const record = store
      .all()
      .find((r) => r.environment === env && r.nNFSe === numero && r.emitente === cnpj && r.cLocEmi === municipio);
    if (!record) return fail([{ codigo: 'E78', descricao: `NFS-e ${numero} não encontrada.` }]);
    if (record.cancelled) return fail([{ codigo: 'E79', descricao: 'NFS-e já cancelada.' }]);
    const dataHora = brasiliaDateTime(deps.now());
    const eventoXml =
      `<NfseCancelamento><Confirmacao>${rootElementText(dados, 'Pedido')}` +
      `<DataHora>${dataHora}</DataHora></Confirmacao></NfseCancelamento>`;
    const nDFSe = store.nextDfseNumber(env);
    store.addEvent(env, record.chaveAcesso, {
      tipoEvento: '101101',
      nSeqEvento: 1,
      dhProc: dataHora,
      nDFSe: String(nDFSe),
      eventoXml,
    });
    deps.logger.info(`sandbox Coplan: NFS-e ${record.chaveAcesso} cancelled`);
    return resposta('CancelarNfseResposta', `<RetCancelamento>${eventoXml}</RetCancelamento>`);
  }

  function consultar(env: Ambiente, operation: string, dados: string, transmitter: string | null): string {
    const byDps = operation === 'CONSULTARNFSEPORDPS';
    const rootName = byDps ? 'ConsultarNfseDpsEnvio' : 'ConsultarNfseFaixaEnvio';
    const answerName = byDps ? 'ConsultarNfseDpsResposta' : 'ConsultarNfseFaixaResposta';
    const envio = parse(dados, rootName);
    const cnpj = textAt(envio, 'Prestador/CpfCnpj/Cnpj') ?? '';
    if (!/^\d{14}$/.test(cnpj) || !transmitter || inscricaoRoot(transmitter) !== inscricaoRoot(cnpj)) {
      return resposta(answerName, '', [
        { codigo: 'E1200', descricao: 'Prestador ausente ou diferente do certificado.' },
      ]);
    }
    let records: IssuedRecord[];
    if (byDps) {
      const record = store.findByDps(env, textAt(envio, 'idDPS') ?? '');
      records = record && inscricaoRoot(record.emitente) === inscricaoRoot(cnpj) ? [record] : [];
    } else {
      const from = Number(textAt(envio, 'Faixa/NumeroNfseInicial'));
      const to = Number(textAt(envio, 'Faixa/NumeroNfseFinal'));
      records = store
        .all()
        .filter(
          (r) => r.environment === env && r.emitente === cnpj && Number(r.nNFSe) >= from && Number(r.nNFSe) <= to,
        );
    }
    return resposta(answerName, records.length > 0 ? `<ListaNfse>${records.map(compNfse).join('')}</ListaNfse>` : '');
  }

  return {
    family: 'dps-provider-coplan',
    name: 'Coplan',
    mount: '/municipal/coplan/:ambiente(producao|producaorestrita)',
    routes: [
      {
        name: 'anfse_ws',
        method: 'POST',
        path: '/',
        handler(req) {
          const env = envOf(req);
          if (!req.clientCertificate) return soapFault(403, 'soap:Client', 'Certificado de cliente obrigatório.');
          let transmitter: string | null;
          try {
            transmitter = readIcpBrasilIdentity(req.clientCertificate.raw).cnpj;
          } catch {
            transmitter = null;
          }
          try {
            const request = readSoapRequest(req.body);
            const operation = request.operation.replace(/^nfse_web\./, '');
            if (request.namespace !== SERVICE_NS || !OPERATIONS.includes(operation)) {
              return soapFault(
                500,
                'soap:Client',
                `Operação desconhecida: {${request.namespace}}${request.operation}.`,
              );
            }
            const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
            if (action !== `Tributarioaction/ANFSE_WEB.${operation}`) {
              return soapFault(500, 'soap:Client', `SOAPAction "${action}" não corresponde a ${operation}.`);
            }
            const wrapperName = `${operation.charAt(0)}${operation.slice(1).toLowerCase()}request`;
            const wrapper = at(request.element, wrapperName);
            if (!wrapper || wrapper.namespaceURI !== SERVICE_NS) {
              return soapFault(500, 'soap:Client', `Esperado <trib:${wrapperName}> (${SERVICE_NS}).`);
            }
            const cabecalho = stringParameter(wrapper, 'nfseCabecMsg', DATA_NS(env));
            if (!CABECALHO.test(cabecalho)) {
              return soapFault(500, 'soap:Client', 'nfseCabecMsg: esperado cabecalho versao 1.01 (versaoDados 1.01).');
            }
            const dados = stringParameter(wrapper, 'nfseDadosMsg', DATA_NS(env));
            const message =
              operation === 'GERARNFSE'
                ? gerar(env, dados, transmitter)
                : operation === 'CANCELARNFSE'
                  ? cancelar(env, dados, transmitter)
                  : consultar(env, operation, dados, transmitter);
            return answer(operation, message);
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
      isWrite: (req) => /GERARNFSE|CANCELARNFSE/.test(String(req.headers.soapaction ?? '')),
    },
  };
}

/** The Coplan entry of the municipal sandboxes (../municipal.ts). */
export const coplanSandbox = {
  engine: 'dps-provider:coplan',
  slug: 'coplan',
  create: createCoplanService,
} satisfies MunicipalSandbox;
