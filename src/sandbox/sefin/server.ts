import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { gzipSync } from 'node:zlib';
import { readCertificateIdentity } from '../../certificates/pkcs12.ts';
import { validateXml } from '../../xml/xsd.ts';
import { handleParametrizacao, seededMunicipalities } from '../adn/parametrizacao.ts';
import { buildAccessKey } from './access-key.ts';
import { httpMessage, type MensagemProcessamento, officialMessage } from './codes.ts';
import {
  checkDpsRules,
  type DpsData,
  identifierInscricao,
  inscricaoOf,
  inscricaoRoot,
  readDps,
  stripZeros,
} from './dps.ts';
import { checkEventRules, composeEvento, readPedido } from './events.ts';
import { composeNfse } from './nfse-builder.ts';
import { type SandboxSigner, signAsSefin, verifyEnvelopedSignature } from './signature.ts';
import { type Ambiente, type IssuedRecord, SefinStore } from './store.ts';
import { brasiliaDateTime, brasiliaDateTimeMillis, brasiliaYearMonth } from './time.ts';
import { receiveDocument, rootElementText } from './xml.ts';

export type { IssuedEvent, IssuedRecord } from './store.ts';

/**
 * A local stand-in of the Sefin Nacional API (issue, query, events) over HTTPS with client certificates (and, on
 * the same server, the ADN Parâmetros Municipais API of ../adn/parametrizacao.ts),
 * holding requests to the official reception and business rules it knows, and answering with the official
 * JSON shapes. Faults (latency, 500s, dropped connections, commit-then-drop) can be injected.
 */

export interface SefinFaults {
  /** Added before every API request is processed. */
  latencyMs?: number;
  /** Up to this many extra milliseconds, uniformly random. */
  latencyJitterMs?: number;
  /** Share of API requests answered 500 (official error shape), with nothing committed. */
  errorRate?: number;
  /** Share of API requests whose connection is destroyed before processing (nothing committed). */
  dropBeforeProcessRate?: number;
  /** Share of API writes (POST) processed (an NFS-e/event is issued and stored), then dropped without an answer. */
  commitThenDropRate?: number;
}

export interface SefinSandboxOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  tls: { keyPem: string; certPem: string };
  /** The key and certificate the sandbox signs NFS-e and events with. */
  signer: SandboxSigner;
  /** JSONL file that keeps what was issued across restarts; null/absent keeps it in memory only. */
  storeFile?: string | null;
  faults?: SefinFaults;
  now?: () => Date;
  logger?: { info(message: string): void; warn(message: string): void };
  /** ISS rate (%) when the DPS has no pAliq (the real system takes it from the municipality). Default 2. */
  defaultIssRate?: number;
  /** Source of randomness for the fault decisions (tests may pin it). */
  random?: () => number;
  /** CNPJs/CPFs the simulated federal registry does not know (a DPS whose taker is one of them: E0190/E0207). */
  unregisteredDocuments?: string[];
}

export interface SefinSandbox {
  /** `https://127.0.0.1:port`; the API lives under `/producao/SefinNacional` and `/producaorestrita/SefinNacional`. */
  url: string;
  setFaults(faults: SefinFaults): void;
  /** Replaces the list of CNPJs/CPFs unknown to the simulated federal registry. */
  setUnregisteredDocuments(documents: string[]): void;
  issued(): IssuedRecord[];
  close(): Promise<void>;
}

export const SANDBOX_APP_VERSION = 'SefinNac_Sbx_1.0.0';
const MAX_BODY_BYTES = 10 * 1024 * 1024;

interface ClientCertificate {
  cnpj: string | null;
  cpf: string | null;
  subjectCN: string;
  validFrom: Date;
  validTo: Date;
}

interface Reply {
  status: number;
  body?: unknown;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function clientCertificateOf(req: IncomingMessage): ClientCertificate | null {
  const socket = req.socket as TLSSocket;
  if (typeof socket.getPeerCertificate !== 'function') return null;
  const peer = socket.getPeerCertificate(false);
  if (!peer?.raw) return null;
  try {
    const identity = readCertificateIdentity(peer.raw);
    return { ...identity, validFrom: new Date(peer.valid_from), validTo: new Date(peer.valid_to) };
  } catch {
    return {
      cnpj: null,
      cpf: null,
      subjectCN: '',
      validFrom: new Date(peer.valid_from),
      validTo: new Date(peer.valid_to),
    };
  }
}

function clientInscricao(cert: ClientCertificate): string | null {
  return cert.cnpj ?? cert.cpf;
}

function isActor(cert: ClientCertificate, record: IssuedRecord): boolean {
  const own = clientInscricao(cert);
  if (!own) return false;
  return [record.emitente, record.prestador, record.tomador, record.intermediario].some(
    (party) => !!party && inscricaoRoot(party) === inscricaoRoot(own),
  );
}

function sanitizeFaults(input: unknown): SefinFaults {
  if (!input || typeof input !== 'object') throw new HttpError(400, 'faults must be a JSON object');
  const source = input as Record<string, unknown>;
  const out: SefinFaults = {};
  for (const key of ['latencyMs', 'latencyJitterMs'] as const) {
    const value = source[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw new HttpError(400, `${key} must be ≥ 0`);
    out[key] = value;
  }
  for (const key of ['errorRate', 'dropBeforeProcessRate', 'commitThenDropRate'] as const) {
    const value = source[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'number' || !(value >= 0 && value <= 1))
      throw new HttpError(400, `${key} must be within [0, 1]`);
    out[key] = value;
  }
  return out;
}

function gzipBase64Of(xml: string): string {
  return gzipSync(Buffer.from(xml, 'utf8')).toString('base64');
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseJson(body: Buffer): Record<string, unknown> | null {
  try {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Case-insensitive field lookup (clients differ in casing). */
function field(body: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(body).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : body[key];
}

export async function startSefinSandbox(options: SefinSandboxOptions): Promise<SefinSandbox> {
  const now = options.now ?? (() => new Date());
  const random = options.random ?? Math.random;
  const logger = options.logger ?? { info: () => {}, warn: () => {} };
  const defaultIssRate = options.defaultIssRate ?? 2;
  const store = new SefinStore(options.storeFile ?? null, (m) => logger.warn(m));
  let faults: SefinFaults = sanitizeFaults(options.faults ?? {});
  let unregistered = new Set(options.unregisteredDocuments ?? []);
  const registry = { isRegistered: (document: string) => !unregistered.has(document) };

  const envelope = (env: Ambiente, at: Date) => ({
    tipoAmbiente: env,
    versaoAplicativo: SANDBOX_APP_VERSION,
    dataHoraProcessamento: brasiliaDateTimeMillis(at),
  });
  const nfseErrors = (
    env: Ambiente,
    at: Date,
    status: number,
    erros: MensagemProcessamento[],
    idDps?: string,
  ): Reply => ({
    status,
    body: { ...envelope(env, at), ...(idDps ? { idDPS: idDps } : {}), erros },
  });
  const responseErro = (env: Ambiente, at: Date, status: number, erro: MensagemProcessamento): Reply => ({
    status,
    body: { ...envelope(env, at), erro },
  });

  function postNfse(env: Ambiente, cert: ClientCertificate | null, body: Buffer): Reply {
    const at = now();
    if (!cert)
      return nfseErrors(env, at, 403, [
        officialMessage('E1200', 'Certificado de Transmissor inexistente na mensagem.'),
      ]);
    if (at < cert.validFrom || at > cert.validTo) {
      return nfseErrors(env, at, 403, [
        officialMessage('E1203', `Validade: ${cert.validFrom.toISOString()} a ${cert.validTo.toISOString()}.`),
      ]);
    }
    if (!clientInscricao(cert)) return nfseErrors(env, at, 403, [officialMessage('E1209')]);

    const json = parseJson(body);
    if (!json)
      return nfseErrors(env, at, 400, [
        officialMessage('E1225', 'Corpo da requisição deve ser JSON: {"dpsXmlGZipB64": "..."}.'),
      ]);
    const received = receiveDocument(field(json, 'dpsXmlGZipB64'), 'DPS', 'DPS');
    if (!received.ok) return nfseErrors(env, at, 400, [received.error]);
    const dps = readDps(received.value.root);

    const signature = verifyEnvelopedSignature(received.value.xml, received.value.root, dps.infDps);
    if (!signature.ok) {
      const code = signature.reason === 'missing' ? 'E0717' : 'E0714';
      return nfseErrors(env, at, 400, [officialMessage(code, signature.detail)], dps.id);
    }
    const signer = signature.value;
    const signerFrom = new Date(signer.certificate.validFrom);
    const signerTo = new Date(signer.certificate.validTo);
    if (at < signerFrom || at > signerTo) {
      const detail = `Validade: ${signerFrom.toISOString()} a ${signerTo.toISOString()}.`;
      return nfseErrors(env, at, 400, [officialMessage('E0715', detail)], dps.id);
    }
    const signerId = signer.identity.cnpj ?? signer.identity.cpf;
    if (!signerId) {
      return nfseErrors(
        env,
        at,
        400,
        [officialMessage('E0716', 'Certificado sem CNPJ (OID 2.16.76.1.3.3) ou CPF.')],
        dps.id,
      );
    }
    const emitente = inscricaoOf(dps.emitter);
    if (!emitente || inscricaoRoot(signerId) !== inscricaoRoot(emitente)) {
      const detail = `Certificado da assinatura: ${signerId}; emitente da DPS: ${emitente ?? '(não identificado)'}.`;
      return nfseErrors(env, at, 400, [officialMessage('E0718', detail)], dps.id);
    }
    const transmitter = clientInscricao(cert)!;
    if (inscricaoRoot(transmitter) !== inscricaoRoot(emitente)) {
      const detail = `A raiz do CNPJ/CPF do certificado de transmissão (${inscricaoRoot(transmitter)}) difere da do emitente da DPS (${inscricaoRoot(emitente)}).`;
      return nfseErrors(env, at, 403, [officialMessage('E1200', detail)], dps.id);
    }

    const errors = checkDpsRules(dps, env, at, store, registry);
    if (errors.length > 0) return nfseErrors(env, at, 400, errors, dps.id);

    const registeredName = signer.identity.subjectCN.split(':')[0]?.trim() || null;
    const record = issue(env, at, dps, received.value.xml, registeredName);
    return {
      status: 201,
      body: {
        ...envelope(env, at),
        idDps: record.idDps,
        chaveAcesso: record.chaveAcesso,
        nfseXmlGZipB64: gzipBase64Of(record.nfseXml),
      },
    };
  }

  function issue(env: Ambiente, at: Date, dps: DpsData, dpsXml: string, registeredName: string | null): IssuedRecord {
    const ident = identifierInscricao(dps.emitter)!;
    const emitente = inscricaoOf(dps.emitter)!;
    const nNFSe = store.nextNfseNumber(env, dps.cLocEmi, emitente);
    const nDFSe = store.nextDfseNumber(env);
    const dhProc = brasiliaDateTime(at);
    let chaveAcesso: string;
    do {
      chaveAcesso = buildAccessKey({
        cMun: dps.cLocEmi,
        ambGer: 2,
        tpInsc: ident.tpInsc,
        inscricao: ident.inscricao,
        nNFSe,
        aamm: brasiliaYearMonth(at),
      });
    } while (store.findByKey(env, chaveAcesso));
    const unsigned = composeNfse({
      dps,
      dpsRaw: rootElementText(dpsXml, 'DPS'),
      chaveAcesso,
      nNFSe,
      nDFSe,
      dhProc,
      verAplic: SANDBOX_APP_VERSION,
      defaultIssRate,
      registeredName,
    });
    const nfseXml = signAsSefin(unsigned, 'NFSe', 'infNFSe', options.signer);
    const check = validateXml('NFSe', nfseXml);
    if (!check.ok) throw new Error(`sandbox generated an NFS-e that fails NFSe_v1.01.xsd: ${check.errors.join(' | ')}`);
    const record = {
      environment: env,
      chaveAcesso,
      idDps: dps.id,
      nNFSe: String(nNFSe),
      nDFSe: String(nDFSe),
      cLocEmi: dps.cLocEmi,
      emitente,
      prestador: inscricaoOf(dps.prest),
      tomador: inscricaoOf(dps.toma),
      intermediario: inscricaoOf(dps.interm),
      serie: stripZeros(dps.serie),
      nDPS: stripZeros(dps.nDPS),
      dhProc,
      nfseXml,
    };
    store.addNfse(record);
    logger.info(`sandbox Sefin: NFS-e ${chaveAcesso} issued for DPS ${dps.id} (ambiente ${env})`);
    return store.findByKey(env, chaveAcesso)!;
  }

  function getNfse(env: Ambiente, cert: ClientCertificate | null, key: string): Reply {
    const at = now();
    if (!cert) return responseErro(env, at, 401, httpMessage(401, 'noClientCertificate'));
    if (!/^[0-9]{50}$/.test(key)) return responseErro(env, at, 400, httpMessage(400, 'badAccessKey'));
    const record = store.findByKey(env, key);
    if (!record) return responseErro(env, at, 404, httpMessage(404, 'nfseNotFound'));
    if (!isActor(cert, record)) return responseErro(env, at, 403, httpMessage(403, 'nfseForbidden'));
    return {
      status: 200,
      body: { ...envelope(env, at), chaveAcesso: record.chaveAcesso, nfseXmlGZipB64: gzipBase64Of(record.nfseXml) },
    };
  }

  function getDps(env: Ambiente, cert: ClientCertificate | null, id: string, head: boolean): Reply {
    const at = now();
    if (!cert) return responseErro(env, at, 401, httpMessage(401, 'noClientCertificate'));
    if (!/^DPS[0-9]{42}$/.test(id)) return responseErro(env, at, 400, httpMessage(400, 'badDpsId'));
    const record = store.findByDps(env, id);
    if (!record) return responseErro(env, at, 404, httpMessage(404, 'dpsNotFound'));
    if (head) return { status: 200 };
    if (!isActor(cert, record)) return responseErro(env, at, 403, httpMessage(403, 'nfseForbidden'));
    return { status: 200, body: { ...envelope(env, at), idDps: record.idDps, chaveAcesso: record.chaveAcesso } };
  }

  function postEvent(env: Ambiente, cert: ClientCertificate | null, key: string, body: Buffer): Reply {
    const at = now();
    if (!cert) return responseErro(env, at, 401, httpMessage(401, 'noClientCertificate'));
    const json = parseJson(body);
    if (!json) {
      return responseErro(
        env,
        at,
        400,
        officialMessage('E1225', 'Corpo da requisição deve ser JSON: {"pedidoRegistroEventoXmlGZipB64": "..."}.'),
      );
    }
    const received = receiveDocument(field(json, 'pedidoRegistroEventoXmlGZipB64'), 'pedRegEvento', 'pedRegEvento');
    if (!received.ok) return responseErro(env, at, 400, received.error);
    const pedido = readPedido(received.value.root);

    const signature = verifyEnvelopedSignature(received.value.xml, received.value.root, pedido.infPedReg);
    if (!signature.ok) {
      return responseErro(
        env,
        at,
        400,
        officialMessage(signature.reason === 'missing' ? 'E1989' : 'E1980', signature.detail),
      );
    }
    const signer = signature.value;
    const signerFrom = new Date(signer.certificate.validFrom);
    const signerTo = new Date(signer.certificate.validTo);
    if (at < signerFrom || at > signerTo) {
      return responseErro(
        env,
        at,
        400,
        officialMessage('E1983', `Validade: ${signerFrom.toISOString()} a ${signerTo.toISOString()}.`),
      );
    }
    if (!signer.identity.cnpj && !signer.identity.cpf) {
      return responseErro(env, at, 400, officialMessage('E1986', 'Certificado sem CNPJ (OID 2.16.76.1.3.3) ou CPF.'));
    }
    if (
      pedido.cnpjAutor &&
      (!signer.identity.cnpj || inscricaoRoot(signer.identity.cnpj) !== inscricaoRoot(pedido.cnpjAutor))
    ) {
      return responseErro(
        env,
        at,
        400,
        officialMessage('E0812', `CNPJAutor ${pedido.cnpjAutor}; certificado ${signer.identity.cnpj ?? '(sem CNPJ)'}.`),
      );
    }
    if (pedido.cpfAutor && signer.identity.cpf !== pedido.cpfAutor) {
      return responseErro(
        env,
        at,
        400,
        officialMessage('E0815', `CPFAutor ${pedido.cpfAutor}; certificado ${signer.identity.cpf ?? '(sem CPF)'}.`),
      );
    }

    const record = store.findByKey(env, pedido.chNFSe);
    const otherEnv: Ambiente = env === 1 ? 2 : 1;
    const ruleError = checkEventRules(pedido, key, env, at, record, !!store.findByKey(otherEnv, pedido.chNFSe));
    if (ruleError) return responseErro(env, at, 400, ruleError);
    if (!record || !isActor(cert, record)) return responseErro(env, at, 401, httpMessage(401, 'eventsForbidden'));

    const nSeqEvento = record.events.filter((e) => e.tipoEvento === pedido.tipoEvento).length + 1;
    const nDFSe = store.nextDfseNumber(env);
    const dhProc = brasiliaDateTime(at);
    const unsigned = composeEvento({
      chaveAcesso: record.chaveAcesso,
      tipoEvento: pedido.tipoEvento,
      nSeqEvento,
      dhProc,
      nDFSe,
      verAplic: SANDBOX_APP_VERSION,
      pedidoRaw: rootElementText(received.value.xml, 'pedRegEvento'),
    });
    const eventoXml = signAsSefin(unsigned, 'evento', 'infEvento', options.signer);
    const check = validateXml('evento', eventoXml);
    if (!check.ok)
      throw new Error(`sandbox generated an evento that fails evento_v1.01.xsd: ${check.errors.join(' | ')}`);
    store.addEvent(env, record.chaveAcesso, {
      tipoEvento: pedido.tipoEvento,
      nSeqEvento,
      dhProc,
      nDFSe: String(nDFSe),
      eventoXml,
    });
    logger.info(`sandbox Sefin: event ${pedido.tipoEvento} #${nSeqEvento} registered for NFS-e ${record.chaveAcesso}`);
    return { status: 201, body: { ...envelope(env, at), eventoXmlGZipB64: gzipBase64Of(eventoXml) } };
  }

  function getEvent(env: Ambiente, cert: ClientCertificate | null, key: string, tipo: string, seq: string): Reply {
    const at = now();
    if (!cert) return responseErro(env, at, 401, httpMessage(401, 'noClientCertificate'));
    if (!/^[0-9]{50}$/.test(key) || !/^[0-9]{6}$/.test(tipo) || !/^[0-9]{1,3}$/.test(seq)) {
      return responseErro(
        env,
        at,
        422,
        httpMessage(422, 'eventsBadRequest', 'Chave (50 dígitos), tipo de evento (6) e sequencial (1 a 3 dígitos).'),
      );
    }
    const record = store.findByKey(env, key);
    if (!record) return responseErro(env, at, 404, httpMessage(404, 'eventsNotFound'));
    if (!isActor(cert, record)) return responseErro(env, at, 401, httpMessage(401, 'eventsForbidden'));
    const event = record.events.find((e) => e.tipoEvento === tipo && e.nSeqEvento === Number(seq));
    if (!event) return responseErro(env, at, 404, httpMessage(404, 'eventsNotFound'));
    return { status: 200, body: { ...envelope(env, at), eventoXmlGZipB64: gzipBase64Of(event.eventoXml) } };
  }

  /** Routes of the official API below `/{producao|producaorestrita}/SefinNacional`. */
  async function api(env: Ambiente, path: string, req: IncomingMessage): Promise<Reply> {
    const cert = clientCertificateOf(req);
    const method = req.method ?? 'GET';
    const segments = path.split('/').filter(Boolean).map(decodeURIComponent);
    const at = now();
    if (segments[0] === 'nfse' && segments.length === 1 && method === 'POST') {
      return postNfse(env, cert, await readBody(req));
    }
    if (segments[0] === 'nfse' && segments.length === 2 && method === 'GET') return getNfse(env, cert, segments[1]);
    if (segments[0] === 'nfse' && segments.length === 3 && segments[2] === 'eventos' && method === 'POST') {
      return postEvent(env, cert, segments[1], await readBody(req));
    }
    if (segments[0] === 'nfse' && segments.length === 5 && segments[2] === 'eventos' && method === 'GET') {
      return getEvent(env, cert, segments[1], segments[3], segments[4]);
    }
    if (segments[0] === 'dps' && segments.length === 2 && (method === 'GET' || method === 'HEAD')) {
      return getDps(env, cert, segments[1], method === 'HEAD');
    }
    return responseErro(env, at, 404, httpMessage(404, 'routeNotFound', `${method} ${path}`));
  }

  async function admin(path: string, req: IncomingMessage): Promise<Reply> {
    if (path === '/__sandbox/faults' && req.method === 'PUT') {
      const json = parseJson(await readBody(req));
      if (!json) throw new HttpError(400, 'faults must be a JSON object');
      faults = sanitizeFaults(json);
      logger.info(`sandbox Sefin: faults set to ${JSON.stringify(faults)}`);
      return { status: 200, body: faults };
    }
    if (path === '/__sandbox/faults' && req.method === 'GET') return { status: 200, body: faults };
    if (path === '/__sandbox/adn' && req.method === 'GET') return { status: 200, body: seededMunicipalities() };
    if (path === '/__sandbox/registry' && req.method === 'PUT') {
      const json = parseJson(await readBody(req)) as { unregistered?: unknown } | null;
      const list = json?.unregistered;
      if (!Array.isArray(list) || !list.every((d) => typeof d === 'string')) {
        throw new HttpError(400, 'body must be {"unregistered": ["<CNPJ or CPF>", …]}');
      }
      unregistered = new Set(list as string[]);
      return { status: 200, body: { unregistered: [...unregistered] } };
    }
    if (path === '/__sandbox/issued' && req.method === 'GET') {
      return {
        status: 200,
        body: store.all().map(({ nfseXml: _xml, events, ...rest }) => ({
          ...rest,
          events: events.map(({ eventoXml: _evt, ...event }) => event),
        })),
      };
    }
    throw new HttpError(404, `no sandbox route ${req.method} ${path}`);
  }

  function send(res: ServerResponse, reply: Reply, head = false): void {
    if (reply.body === undefined) {
      res.writeHead(reply.status, { 'content-length': '0' });
      res.end();
      return;
    }
    const text = JSON.stringify(reply.body);
    res.writeHead(reply.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
    });
    res.end(head ? undefined : text);
  }

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://sandbox.invalid');
    const path = url.pathname;
    if (path.startsWith('/__sandbox/')) {
      try {
        send(res, await admin(path, req));
      } catch (err) {
        const status = err instanceof HttpError ? err.status : 500;
        send(res, { status, body: { error: (err as Error).message } });
      }
      return;
    }
    // the ADN Parâmetros Municipais API (src/sandbox/adn/), beside Sefin on the same TLS server
    const adn = /^\/(producao|producaorestrita)\/parametrizacao(\/.*)?$/.exec(path);
    if (adn) {
      send(res, handleParametrizacao(req.method ?? 'GET', adn[2] ?? '/', clientCertificateOf(req) !== null));
      return;
    }
    const match = /^\/(producao|producaorestrita)\/SefinNacional(\/.*)?$/.exec(path);
    if (!match) {
      send(res, {
        status: 404,
        body: {
          error: 'use /{producao|producaorestrita}/SefinNacional/… or /{producao|producaorestrita}/parametrizacao/…',
        },
      });
      return;
    }
    const env: Ambiente = match[1] === 'producao' ? 1 : 2;
    const current = faults;
    const delay = (current.latencyMs ?? 0) + random() * (current.latencyJitterMs ?? 0);
    if (delay > 0) await sleep(delay);
    if (random() < (current.dropBeforeProcessRate ?? 0)) {
      logger.warn(`sandbox Sefin fault: dropped ${req.method} ${path} before processing`);
      req.socket.destroy();
      return;
    }
    if (random() < (current.errorRate ?? 0)) {
      logger.warn(`sandbox Sefin fault: 500 for ${req.method} ${path}`);
      const reply =
        req.method === 'POST' && /^\/nfse\/?$/.test(match[2] ?? '')
          ? nfseErrors(env, now(), 500, [httpMessage(500, 'processingFailure', 'Falha simulada pelo sandbox.')])
          : responseErro(env, now(), 500, httpMessage(500, 'processingFailure', 'Falha simulada pelo sandbox.'));
      send(res, reply);
      return;
    }
    // "commit, then drop" is about writes (the case that creates duplicates): reads are answered
    const commitThenDrop = req.method === 'POST' && random() < (current.commitThenDropRate ?? 0);
    let reply: Reply;
    try {
      reply = await api(env, match[2] ?? '/', req);
    } catch (err) {
      if (err instanceof HttpError) {
        reply = responseErro(env, now(), err.status, { codigo: String(err.status), descricao: err.message });
      } else {
        logger.warn(`sandbox Sefin: internal error on ${req.method} ${path}: ${(err as Error).stack ?? err}`);
        reply = responseErro(env, now(), 500, httpMessage(500, 'processingFailure', (err as Error).message));
      }
    }
    if (commitThenDrop) {
      logger.warn(
        `sandbox Sefin fault: processed ${req.method} ${path} (HTTP ${reply.status}), then dropped the answer`,
      );
      req.socket.destroy();
      return;
    }
    send(res, reply, req.method === 'HEAD');
  }

  const server: Server = createServer(
    {
      key: options.tls.keyPem,
      cert: options.tls.certPem,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    },
    (req, res) => {
      handle(req, res).catch((err) => {
        logger.warn(`sandbox Sefin: ${(err as Error).message}`);
        if (!res.headersSent) send(res, { status: 500, body: { error: 'internal sandbox error' } });
        else res.destroy();
      });
    },
  );
  server.on('tlsClientError', () => {});

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;

  return {
    url: `https://${urlHost}:${port}`,
    setFaults(next: SefinFaults) {
      faults = sanitizeFaults(next);
    },
    setUnregisteredDocuments(documents: string[]) {
      unregistered = new Set(documents);
    },
    issued: () => store.all(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
