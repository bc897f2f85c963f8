import { join } from 'node:path';
import { readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import type { SandboxRequest, SandboxService } from '../kit/server.ts';
import { child, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import { expectedDpsId, inscricaoOf, inscricaoRoot, readDps } from '../sefin/dps.ts';
import { type Ambiente, type IssuedRecord, SefinStore } from '../sefin/store.ts';
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
  verifyDocumentSignature,
  withoutDeclaration,
} from './common.ts';
import { registerEvent } from './events.ts';

/**
 * Digifred's `nfse/ws/principal` (briefs/providers-own.md §4): SOAP 1.1 in `http://www.sped.fazenda.gov.br/nfse/wsdl`,
 * one qualified `<tns:param>` string per operation (`GerarNfse`, `CancelarNfse`, and `ConsultarNfse` as the engine
 * reads it), SOAPAction = the operation, client certificate required (its CNPJ root must be the emitter's). It takes
 * the taxpayer-built `NFSe` with empty `nNFSe`, `nDFSe` and empty `Id` on `infNFSe` and `infDPS` — only that — signed
 * as a whole document (`URI=""`), fills in what it assigns, validates the completed document against
 * NFSe_v1.01.xsd, issues a national-style NFS-e and answers with two XML declarations inside CDATA.
 */

export const DIGIFRED_NS = 'http://www.sped.fazenda.gov.br/nfse/wsdl';
const OPERATIONS = ['GerarNfse', 'CancelarNfse', 'ConsultarNfse'];
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

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
  return `<${root}>${body}${lista}</${root}>`;
}

function answer(operation: string, message: string) {
  const cdata = `${DECLARATION}${DECLARATION}${message}`.replaceAll(']]>', ']]]]><![CDATA[>');
  return soapAnswer(
    `<tns:${operation}Response xmlns:tns="${DIGIFRED_NS}"><tns:return><![CDATA[${cdata}]]></tns:return></tns:${operation}Response>`,
  );
}

const nfseOf = (record: IssuedRecord) =>
  `<ListaNfse><CompNfse>${withoutDeclaration(record.nfseXml)}</CompNfse></ListaNfse>`;

export function createDigifredService(deps: MunicipalSandboxDependencies): SandboxService {
  const store = new SefinStore(deps.dataDir ? join(deps.dataDir, 'digifred', 'store.jsonl') : null, (m) =>
    deps.logger.warn(m),
  );
  const envOf = (req: SandboxRequest): Ambiente => (req.params.ambiente === 'producao' ? 1 : 2);

  function gerar(env: Ambiente, xml: string, transmitter: string | null): string {
    const fail = (errors: Mensagem[]) => resposta('GerarNfseResposta', '', errors);
    const at = deps.now();
    let root: Element | null;
    try {
      root = parseDom(xml).documentElement;
    } catch (err) {
      return fail([{ codigo: 'E1226', descricao: `XML mal formado: ${(err as Error).message}` }]);
    }
    if (root?.localName !== 'NFSe' || root.namespaceURI !== NFSE_NS) {
      return fail([{ codigo: 'E1242', descricao: `Esperado NFSe (${NFSE_NS}).` }]);
    }
    const infNFSe = child(root, 'infNFSe');
    const infDps = child(child(infNFSe, 'DPS'), 'infDPS');
    if (
      infNFSe?.getAttribute('Id') !== '' ||
      infDps?.getAttribute('Id') !== '' ||
      textAt(infNFSe, 'nNFSe') !== '' ||
      textAt(infNFSe, 'nDFSe') !== ''
    ) {
      return fail([
        {
          codigo: 'E1235',
          descricao: 'O NFSe enviado deve ter nNFSe, nDFSe e os atributos Id de infNFSe e infDPS vazios.',
        },
      ]);
    }
    const verified = verifyDocumentSignature(xml, root);
    if (!verified.ok) return fail([{ codigo: 'E0714', descricao: 'Assinatura inválida.', correcao: verified.detail }]);
    const dps = readDps(child(infNFSe, 'DPS')!);
    const emitente = inscricaoOf(dps.emitter);
    const signer = verified.identity.cnpj;
    if (!emitente || !signer || inscricaoRoot(signer) !== inscricaoRoot(emitente)) {
      return fail([{ codigo: 'E0718', descricao: 'O certificado da assinatura não é do emitente.' }]);
    }
    if (!transmitter || inscricaoRoot(transmitter) !== inscricaoRoot(emitente)) {
      return fail([{ codigo: 'E1200', descricao: 'O certificado de transmissão não é do emitente.' }]);
    }
    // what Digifred assigns, filled in before the schema: the DPS Id, the number, the key
    const dpsId = expectedDpsId(dps) ?? '';
    dps.id = dpsId;
    const completed = xml
      .replace('<infNFSe Id=""', `<infNFSe Id="NFS${'1'.repeat(50)}"`)
      .replace('<infDPS Id=""', `<infDPS Id="${dpsId}"`)
      .replace(/<nNFSe(?:\/>|><\/nNFSe>)/, '<nNFSe>1</nNFSe>')
      .replace(/<nDFSe(?:\/>|><\/nDFSe>)/, '<nDFSe>1</nDFSe>');
    const problems = schemaErrors('NFSe', completed);
    if (problems) return fail([{ codigo: 'E1235', descricao: problems }]);
    if (!/^\d{6}$/.test(textAt(dps.infDps, 'serv/cServ/cTribNac') ?? '')) {
      return fail([{ codigo: 'E1235', descricao: 'cTribNac deve ter 6 dígitos.' }]);
    }
    const errors = dpsRuleErrors(dps, env, at, store);
    if (errors.length > 0) return fail(errors);
    const record = issueNfse({
      env,
      at,
      dps,
      dpsRaw: rootElementText(completed, 'DPS'),
      store,
      signer: deps.signer,
      registeredName: textAt(infNFSe, 'emit/xNome') ?? null,
    });
    deps.logger.info(`sandbox Digifred: NFS-e ${record.chaveAcesso} issued for DPS ${dpsId} (ambiente ${env})`);
    return resposta('GerarNfseResposta', nfseOf(record));
  }

  function consultar(env: Ambiente, xml: string, transmitter: string | null): string {
    const fail = (errors: Mensagem[]) => resposta('ConsultarNfseResposta', '', errors);
    let root: Element | null;
    try {
      root = parseDom(xml).documentElement;
    } catch (err) {
      return fail([{ codigo: 'E1226', descricao: `XML mal formado: ${(err as Error).message}` }]);
    }
    const idDps = textAt(root, 'idDPS');
    const chave = textAt(root, 'chaveAcesso');
    if (root?.localName !== 'ConsultarNfseEnvio' || (!idDps && !chave)) {
      return fail([{ codigo: 'E1235', descricao: 'Esperado ConsultarNfseEnvio com idDPS ou chaveAcesso.' }]);
    }
    const record = idDps ? store.findByDps(env, idDps) : store.findByKey(env, chave ?? '');
    if (!record) return resposta('ConsultarNfseResposta', '');
    if (!transmitter || inscricaoRoot(transmitter) !== inscricaoRoot(record.emitente)) {
      return fail([{ codigo: 'E1200', descricao: 'O certificado de transmissão não é do emitente da NFS-e.' }]);
    }
    const evento = record.events.find((e) => e.tipoEvento === '101101');
    return resposta('ConsultarNfseResposta', nfseOf(record) + (evento ? withoutDeclaration(evento.eventoXml) : ''));
  }

  function cancelar(env: Ambiente, xml: string): string {
    const result = registerEvent({
      xml,
      env,
      at: deps.now(),
      store,
      signer: deps.signer,
      exclusiveC14n: false,
      signatureFailure: 'Assinatura inválida.',
    });
    if (!result.ok) return resposta('CancelarNfseResposta', '', result.errors);
    deps.logger.info(`sandbox Digifred: NFS-e ${result.chaveAcesso} cancelled`);
    return resposta('CancelarNfseResposta', withoutDeclaration(result.event.eventoXml));
  }

  return {
    family: 'dps-provider-digifred',
    name: 'Digifred',
    mount: '/municipal/digifred/:ambiente(producao|producaorestrita)',
    routes: [
      {
        name: 'principal',
        method: 'POST',
        path: '/',
        handler(req) {
          const env = envOf(req);
          if (!req.clientCertificate) return soapFault(403, 'soap:Client', 'Certificado de cliente obrigatório.');
          let transmitter: string | null = null;
          try {
            transmitter = readIcpBrasilIdentity(req.clientCertificate.raw).cnpj;
          } catch {
            transmitter = null;
          }
          try {
            const request = readSoapRequest(req.body);
            if (request.namespace !== DIGIFRED_NS || !OPERATIONS.includes(request.operation)) {
              return soapFault(
                500,
                'soap:Client',
                `Operação desconhecida: {${request.namespace}}${request.operation}.`,
              );
            }
            const action = String(req.headers.soapaction ?? '').replace(/^"|"$/g, '');
            if (action !== request.operation) {
              return soapFault(500, 'soap:Client', `SOAPAction "${action}" não corresponde a ${request.operation}.`);
            }
            const xml = stringParameter(request.element, 'param', DIGIFRED_NS);
            const message =
              request.operation === 'GerarNfse'
                ? gerar(env, xml, transmitter)
                : request.operation === 'ConsultarNfse'
                  ? consultar(env, xml, transmitter)
                  : cancelar(env, xml);
            return answer(request.operation, message);
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
      isWrite: (req) => /GerarNfse|CancelarNfse/.test(String(req.headers.soapaction ?? '')),
    },
  };
}

/** The Digifred entry of the municipal sandboxes (../municipal.ts). */
export const digifredSandbox = {
  engine: 'dps-provider:digifred',
  slug: 'digifred',
  create: createDigifredService,
} satisfies MunicipalSandbox;
