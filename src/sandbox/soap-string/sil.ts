import { join } from 'node:path';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import type { SandboxRequest, SandboxService } from '../kit/server.ts';
import { verifyEnvelopedSignature } from '../kit/xml-signature.ts';
import { child, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import { isValidAccessKey } from '../sefin/access-key.ts';
import { inscricaoOf, inscricaoRoot, readDps, stripZeros } from '../sefin/dps.ts';
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
  signatureOf,
  soapAnswer,
  soapFault,
  stringParameter,
  usesExclusiveC14n,
  verifyDocumentSignature,
  withoutDeclaration,
} from './common.ts';
import { registerEvent } from './events.ts';

/**
 * SIL Tecnologia / TBW `NotaFiscalNacional` (briefs/providers-own.md §4): SOAP 1.1 document/literal in
 * `http://webservices.sil.com/`, SOAPAction "", operations `NotaFiscalNacionalGerar|Consultar|Cancelar` with one
 * unqualified `<xml>` string, answers `<return>` with an escaped `<Retorno>` (escaped twice for consultations).
 * It takes a taxpayer-built `NFSe` signed on `infNFSe` with exclusive C14N only (anything else: "Falha na validação
 * da assinatura"), whose provisional `Id` is a well-formed key of the DPS's emitter (the engine's reading, written
 * in its definition); the signer's CNPJ root must be the provider's (auth by signature: no client certificate is
 * required). It assigns the number and key, issues a national-style NFS-e and keeps it for queries and cancellation.
 */

export const SIL_NS = 'http://webservices.sil.com/';
const SIGNATURE_FAILURE = 'Falha na validação da assinatura';
const OPERATIONS = ['NotaFiscalNacionalGerar', 'NotaFiscalNacionalConsultar', 'NotaFiscalNacionalCancelar'];

function retorno(ok: boolean, body: string, errors: Mensagem[] = []): string {
  const lista =
    errors.length === 0
      ? ''
      : `<listaMensagens>${errors
          .map(
            (e) =>
              `<mensagem><codigo>${escapeXml(e.codigo)}</codigo><descricao>${escapeXml(e.descricao)}</descricao>` +
              `${e.correcao ? `<correcao>${escapeXml(e.correcao)}</correcao>` : ''}</mensagem>`,
          )
          .join('')}</listaMensagens>`;
  const mensagemErro = errors.map((e) => `${e.codigo} - ${e.descricao}`).join('; ');
  return `<Retorno><Status>${ok ? 'PROCESSADO_COM_SUCESSO' : 'ERRO'}</Status><MensagemErro>${escapeXml(mensagemErro)}</MensagemErro>${body}${lista}</Retorno>`;
}

function answer(operation: string, retornoXml: string, doubleEscaped = false) {
  const once = escapeXml(retornoXml);
  const payload = doubleEscaped ? escapeXml(once) : once;
  return soapAnswer(
    `<ns2:${operation}Response xmlns:ns2="${SIL_NS}"><return>${payload}</return></ns2:${operation}Response>`,
  );
}

function noteBody(record: IssuedRecord): string {
  const evento = record.events.find((e) => e.tipoEvento === '101101');
  return (
    `<protocolo>${record.nDFSe}</protocolo><nNFSe>${record.nNFSe}</nNFSe><chaveAcesso>${record.chaveAcesso}</chaveAcesso>` +
    `<situacao>${record.cancelled ? 'CANCELADA' : 'NORMAL'}</situacao>${withoutDeclaration(record.nfseXml)}` +
    (evento ? withoutDeclaration(evento.eventoXml) : '')
  );
}

export function createSilService(deps: MunicipalSandboxDependencies): SandboxService {
  const store = new SefinStore(deps.dataDir ? join(deps.dataDir, 'siltecnologia', 'store.jsonl') : null, (m) =>
    deps.logger.warn(m),
  );
  const envOf = (req: SandboxRequest): Ambiente => (req.params.ambiente === 'producao' ? 1 : 2);

  function gerar(env: Ambiente, xml: string): string {
    const at = deps.now();
    let root: Element | null;
    try {
      root = parseDom(xml).documentElement;
    } catch (err) {
      return retorno(false, '', [{ codigo: 'E1226', descricao: `XML mal formado: ${(err as Error).message}` }]);
    }
    if (root?.localName !== 'NFSe' || root.namespaceURI !== NFSE_NS) {
      return retorno(false, '', [{ codigo: 'E1242', descricao: `Esperado NFSe (${NFSE_NS}).` }]);
    }
    const problems = schemaErrors('NFSe', xml);
    if (problems) return retorno(false, '', [{ codigo: 'E1235', descricao: problems }]);
    const infNFSe = child(root, 'infNFSe')!;
    const signature = signatureOf(root);
    const verified = verifyEnvelopedSignature(xml, root, infNFSe);
    if (!signature || !verified.ok || !usesExclusiveC14n(signature)) {
      const detail = verified.ok ? 'C14N inclusiva não é aceita: use a exclusiva.' : verified.detail;
      return retorno(false, '', [{ codigo: 'E0714', descricao: SIGNATURE_FAILURE, correcao: detail }]);
    }
    const dpsElement = child(infNFSe, 'DPS')!;
    const dps = readDps(dpsElement);
    const emitente = inscricaoOf(dps.emitter);
    const signer = verified.value.identity.cnpj;
    if (!emitente || !signer || inscricaoRoot(signer) !== inscricaoRoot(emitente)) {
      return retorno(false, '', [
        { codigo: 'E0718', descricao: `Certificado da assinatura (${signer ?? 'sem CNPJ'}) não é do emitente.` },
      ]);
    }
    const id = infNFSe.getAttribute('Id') ?? '';
    const key = id.slice(3);
    const prefix = `${dps.cLocEmi}12${emitente.padStart(14, '0')}`;
    const numero = stripZeros(dps.nDPS);
    if (!isValidAccessKey(key) || !key.startsWith(prefix) || textAt(infNFSe, 'nNFSe') !== numero) {
      return retorno(false, '', [
        {
          codigo: 'E0004',
          descricao: `Identificador do infNFSe inválido: ${id}.`,
          correcao: `NFS + chave de acesso (cMun ${dps.cLocEmi}, ambGer 1, CNPJ do emitente, nNFSe ${numero}) com DV.`,
        },
      ]);
    }
    if (!textAt(dps.infDps, 'serv/cServ/cNBS')) {
      return retorno(false, '', [{ codigo: 'E0318', descricao: 'O código NBS (cNBS) é obrigatório.' }]);
    }
    const errors = dpsRuleErrors(dps, env, at, store);
    if (textAt(dps.infDps, 'cLocEmi') !== textAt(infNFSe, 'emit/enderNac/cMun')) {
      errors.push({ codigo: 'E0040', descricao: 'O município do emitente difere do cLocEmi da DPS.' });
    }
    if (errors.length > 0) return retorno(false, '', errors);
    const record = issueNfse({
      env,
      at,
      dps,
      dpsRaw: rootElementText(xml.slice(xml.indexOf('<DPS')), 'DPS'),
      store,
      signer: deps.signer,
      registeredName: textAt(infNFSe, 'emit/xNome') ?? null,
    });
    deps.logger.info(`sandbox SIL: NFS-e ${record.chaveAcesso} issued for DPS ${dps.id} (ambiente ${env})`);
    return retorno(true, noteBody(record));
  }

  function consultar(env: Ambiente, xml: string): string {
    let root: Element | null;
    try {
      root = parseDom(xml).documentElement;
    } catch (err) {
      return retorno(false, '', [{ codigo: 'E1226', descricao: `XML mal formado: ${(err as Error).message}` }]);
    }
    if (root?.localName !== 'ConsultaNFSe')
      return retorno(false, '', [{ codigo: 'E1242', descricao: 'Esperado ConsultaNFSe.' }]);
    const signature = signatureOf(root);
    const verified = verifyDocumentSignature(xml, root);
    if (!signature || !verified.ok || !usesExclusiveC14n(signature)) {
      const detail = verified.ok ? 'C14N inclusiva não é aceita.' : verified.detail;
      return retorno(false, '', [{ codigo: 'E0714', descricao: SIGNATURE_FAILURE, correcao: detail }]);
    }
    const consulente = textAt(root, 'consulente/CNPJ') ?? '';
    if (!/^\d{14}$/.test(consulente) || inscricaoRoot(consulente) !== inscricaoRoot(verified.identity.cnpj ?? '')) {
      return retorno(false, '', [
        { codigo: 'E0718', descricao: 'CNPJ do consulente ausente ou diferente do certificado.' },
      ]);
    }
    const idDps = textAt(root, 'idDPS');
    const chave = textAt(root, 'chaveAcesso');
    const record = idDps ? store.findByDps(env, idDps) : chave ? store.findByKey(env, chave) : undefined;
    if (!idDps && !chave) return retorno(false, '', [{ codigo: 'E1235', descricao: 'Informe idDPS ou chaveAcesso.' }]);
    if (!record) return retorno(true, '');
    if (inscricaoRoot(record.emitente) !== inscricaoRoot(consulente)) {
      return retorno(false, '', [{ codigo: 'E0813', descricao: 'O consulente não é o emitente da NFS-e.' }]);
    }
    return retorno(true, noteBody(record));
  }

  function cancelar(env: Ambiente, xml: string): string {
    const result = registerEvent({
      xml,
      env,
      at: deps.now(),
      store,
      signer: deps.signer,
      exclusiveC14n: true,
      signatureFailure: SIGNATURE_FAILURE,
    });
    if (!result.ok) return retorno(false, '', result.errors);
    deps.logger.info(`sandbox SIL: NFS-e ${result.chaveAcesso} cancelled`);
    return retorno(
      true,
      `<chaveAcesso>${result.chaveAcesso}</chaveAcesso>${withoutDeclaration(result.event.eventoXml)}`,
    );
  }

  return {
    family: 'dps-provider-siltecnologia',
    name: 'SIL/TBW',
    mount: '/municipal/siltecnologia/:ambiente(producao|producaorestrita)',
    routes: [
      {
        name: 'NotaFiscalNacional',
        method: 'POST',
        path: '/',
        handler(req) {
          const env = envOf(req);
          try {
            const request = readSoapRequest(req.body);
            if (request.namespace !== SIL_NS || !OPERATIONS.includes(request.operation)) {
              return soapFault(
                500,
                'soap:Client',
                `Operação desconhecida: {${request.namespace}}${request.operation}.`,
              );
            }
            const xml = stringParameter(request.element, 'xml', null);
            switch (request.operation) {
              case 'NotaFiscalNacionalGerar':
                return answer(request.operation, gerar(env, xml));
              case 'NotaFiscalNacionalConsultar':
                return answer(request.operation, consultar(env, xml), true);
              default:
                return answer(request.operation, cancelar(env, xml));
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
      isWrite: (req) => /NotaFiscalNacional(Gerar|Cancelar)/.test(req.body.toString('utf8')),
    },
  };
}

/** The SIL/TBW entry of the municipal sandboxes (../municipal.ts). */
export const silSandbox = {
  engine: 'dps-provider:siltecnologia',
  slug: 'siltecnologia',
  create: createSilService,
} satisfies MunicipalSandbox;
