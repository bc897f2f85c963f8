import { gunzipSync, gzipSync } from 'node:zlib';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { childElements, escapeXml, parseDom } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import {
  ambienteOf,
  certificateInscricao,
  isNationalView,
  issueNfse,
  nationalViewRoutes,
  receiveDps,
  registerEvent,
  SANDBOX_APP_VERSION,
  storeFor,
  withoutDeclaration,
} from '../raw-xml/core.ts';
import type { MensagemProcessamento } from '../sefin/codes.ts';
import { brasiliaDateTime, brasiliaDateTimeMillis } from '../sefin/time.ts';

/**
 * Fiorilli "IssWeb Nacional" (ACBr FiorilliAPIPropria101; no row in the brief) below
 * `/municipal/fiorilli/{producao|producaorestrita}`. What it serves, and nothing else:
 *
 *   POST /   SOAP 1.1 (`text/xml`), SOAPAction `recepcionarDPS`, Body
 *            `RecepcionarDpsEnvio{DPS}` in `http://www.fiorilli.com.br/nfse-nacional`, the DPS its only child →
 *            200 `RecepcionarDpsResposta{DataRecebimento, Protocolo, NFSe}` (the national NFS-e, signed), or
 *            200 `RecepcionarDpsResposta{ListaMensagens/mensagem{Codigo, Mensagem, Correcao}}` (schema, signature,
 *            rules with the national codes: E0014 for a DPS already processed, …); another operation, action,
 *            content type or envelope → a `soap:Client` Fault (HTTP 500, as JAX-WS does).
 *   POST /nfse/{chave}/eventos   `{"pedidoRegistroEventoXmlGZipB64"}` (the national e101101 pedRegEvento) →
 *            201 `{eventoXmlGZipB64, …}` or 4xx `{erro{codigo, descricao}}`, Sefin's shapes (ACBr sends the event
 *            of these cities to the provider, not to Sefin).
 *   + the national view (GET /dps/{id}, /nfse/{chave}, /nfse/{chave}/eventos/{tipo}/{seq}): ACBr's
 *     `ServicosPadraoNacional` of these cities.
 *
 * Auth: the TLS client certificate only (its CNPJ root must be the DPS emitter's / the event author's); the API
 * Própria messages carry no user/password, and a body with `username`/`password` is refused (not the documented
 * message). The Sefin adherence rule does not apply (these cities issue here because they are not adherent).
 */

export const FIORILLI_NS = 'http://www.fiorilli.com.br/nfse-nacional';
const SOAP11_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const NFSE_NS = 'http://www.sped.fazenda.gov.br/nfse';

function soap(status: number, inner: string): SandboxReply {
  return {
    status,
    headers: { 'content-type': 'text/xml; charset=utf-8' },
    body: `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP11_NS}"><soap:Body>${inner}</soap:Body></soap:Envelope>`,
  };
}

const fault = (status: number, code: string, text: string): SandboxReply =>
  soap(status, `<soap:Fault><faultcode>${code}</faultcode><faultstring>${escapeXml(text)}</faultstring></soap:Fault>`);

function resposta(content: string): SandboxReply {
  return soap(200, `<fio:RecepcionarDpsResposta xmlns:fio="${FIORILLI_NS}">${content}</fio:RecepcionarDpsResposta>`);
}

function mensagens(errors: MensagemProcessamento[]): SandboxReply {
  const items = errors
    .map(
      (e) =>
        `<fio:mensagem><fio:Codigo>${escapeXml(e.codigo)}</fio:Codigo><fio:Mensagem>${escapeXml(e.descricao)}</fio:Mensagem>` +
        `<fio:Correcao>${escapeXml(e.complemento ?? '')}</fio:Correcao></fio:mensagem>`,
    )
    .join('');
  return resposta(`<fio:ListaMensagens>${items}</fio:ListaMensagens>`);
}

const packed = (xml: string) => gzipSync(Buffer.from(xml, 'utf8')).toString('base64');

/** The raw text of the DPS inside the envelope, byte for byte (its signature covers these bytes). */
function rawDps(body: string): string | null {
  const start = body.search(/<DPS[\s>]/);
  const end = body.lastIndexOf('</DPS>');
  return start < 0 || end < start ? null : body.slice(start, end + '</DPS>'.length);
}

export function createFiorilliService(deps: MunicipalSandboxDependencies): SandboxService {
  const family = 'dps-provider-fiorilli';
  const store = storeFor(family, deps.dataDir, (m) => deps.logger.warn(m));
  let protocol = 0;

  function recepcionarDps(req: SandboxRequest): SandboxReply {
    if (!/^text\/xml\s*(;|$)/i.test(String(req.headers['content-type'] ?? ''))) {
      return fault(500, 'soap:Client', 'Content-Type deve ser text/xml (SOAP 1.1).');
    }
    const action = String(req.headers.soapaction ?? '').replace(/^"(.*)"$/, '$1');
    if (action !== 'recepcionarDPS')
      return fault(500, 'soap:Client', `SOAPAction desconhecida: ${action || '(vazia)'}`);
    const text = req.body.toString('utf8');
    let operation: Element | undefined;
    try {
      const root = parseDom(text).documentElement;
      if (root?.localName !== 'Envelope' || root.namespaceURI !== SOAP11_NS)
        throw new Error('não é um envelope SOAP 1.1');
      const body = childElements(root).find((e) => e.localName === 'Body');
      operation = body ? childElements(body)[0] : undefined;
    } catch (err) {
      return fault(500, 'soap:Client', `Envelope ilegível: ${(err as Error).message}`);
    }
    if (operation?.localName !== 'RecepcionarDpsEnvio' || operation.namespaceURI !== FIORILLI_NS) {
      return fault(500, 'soap:Client', `Operação desconhecida: ${operation?.localName ?? '(corpo vazio)'}`);
    }
    const parts = childElements(operation);
    if (parts.length !== 1 || parts[0]!.localName !== 'DPS' || parts[0]!.namespaceURI !== NFSE_NS) {
      return fault(500, 'soap:Client', 'RecepcionarDpsEnvio deve conter somente a DPS (namespace nacional).');
    }
    const dpsText = rawDps(text);
    if (!dpsText) return fault(500, 'soap:Client', 'DPS ilegível.');
    const env = ambienteOf(req);
    const at = deps.now();
    const accepted = receiveDps(Buffer.from(dpsText, 'utf8'), env, req.clientCertificate, store, at);
    if (!accepted.ok) return mensagens(accepted.errors);
    const record = issueNfse(env, at, accepted.value, store, deps.signer);
    deps.logger.info(`sandbox Fiorilli: NFS-e ${record.chaveAcesso} issued for ${record.idDps}`);
    protocol += 1;
    return resposta(
      `<fio:DataRecebimento>${brasiliaDateTime(at)}</fio:DataRecebimento>` +
        `<fio:Protocolo>${Date.now()}${String(protocol).padStart(4, '0')}</fio:Protocolo>` +
        withoutDeclaration(record.nfseXml),
    );
  }

  function eventos(req: SandboxRequest): SandboxReply {
    const env = ambienteOf(req);
    const at = deps.now();
    const envelope = {
      tipoAmbiente: env,
      versaoAplicativo: SANDBOX_APP_VERSION,
      dataHoraProcessamento: brasiliaDateTimeMillis(at),
    };
    const erro = (status: number, codigo: string, descricao: string): SandboxReply => ({
      status,
      body: { ...envelope, erro: { codigo, descricao } },
    });
    if (!/^application\/json\s*(;|$)/i.test(String(req.headers['content-type'] ?? ''))) {
      return erro(415, '415', 'Envie o pedido como application/json.');
    }
    const b64 = req.json()?.pedidoRegistroEventoXmlGZipB64;
    if (typeof b64 !== 'string' || !b64) return erro(400, 'E1235', 'pedidoRegistroEventoXmlGZipB64 ausente.');
    let xml: string;
    try {
      xml = gunzipSync(Buffer.from(b64, 'base64')).toString('utf8');
    } catch {
      return erro(400, 'E1235', 'pedidoRegistroEventoXmlGZipB64 não é GZip/Base64.');
    }
    const registered = registerEvent(Buffer.from(xml, 'utf8'), env, req.clientCertificate, store, at, deps.signer);
    if (!registered.ok) {
      const first = registered.errors[0]!;
      return {
        status: registered.status,
        body: { ...envelope, erro: { ...first } },
      };
    }
    if (registered.value.record.chaveAcesso !== req.params.chave) {
      return erro(400, 'E1831', 'A chave do caminho difere da chave do pedido.');
    }
    return { status: 201, body: { ...envelope, eventoXmlGZipB64: packed(registered.value.eventoXml) } };
  }

  return {
    family,
    name: 'Fiorilli',
    mount: '/municipal/fiorilli/:ambiente(producao|producaorestrita)',
    routes: [
      { name: 'fiorilli.soap', method: 'POST', path: '/', handler: recepcionarDps },
      { name: 'fiorilli.eventos', method: 'POST', path: '/nfse/:chave/eventos', handler: eventos },
      ...nationalViewRoutes(store),
    ],
    before(req) {
      if (certificateInscricao(req.clientCertificate)) return null;
      if (isNationalView(req) || req.routeName === 'fiorilli.eventos') {
        return { status: 403, body: { erro: { codigo: 'E1200', descricao: 'Certificado de cliente ausente.' } } };
      }
      return fault(500, 'soap:Client', 'Certificado digital do cliente (CNPJ/CPF) ausente na conexão.');
    },
    notFound: (req) => fault(404, 'soap:Client', `${req.method} ${req.subPath} não existe.`),
    errorReply: (_req, err) => fault(500, 'soap:Server', err.message),
    faults: {
      errorReply: () => fault(500, 'soap:Server', 'Falha simulada pelo sandbox.'),
      isWrite: (req) => req.method === 'POST',
    },
  };
}

/** The Fiorilli sandbox as mounted by the sandbox server (`/municipal/fiorilli/<producao|producaorestrita>`). */
export const fiorilliSandbox: MunicipalSandbox = {
  engine: 'dps-provider:fiorilli',
  slug: 'fiorilli',
  create: (deps) => createFiorilliService(deps),
};
