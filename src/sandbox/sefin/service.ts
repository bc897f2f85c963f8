import { gzipSync } from 'node:zlib';
import { validateXml } from '../../xml/xsd.ts';
import { type PeerCertificate, readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import {
  type SandboxAdminRoute,
  SandboxHttpError,
  type SandboxLogger,
  type SandboxReply,
  type SandboxRequest,
  type SandboxService,
} from '../kit/server.ts';
import { type SandboxSigner, signEnveloped, verifyEnvelopedSignature } from '../kit/xml-signature.ts';
import { rootElementText } from '../kit/xml-dom.ts';
import { httpMessage, type MensagemProcessamento, officialMessage } from './codes.ts';
import { checkDpsRules, type DpsData, inscricaoOf, inscricaoRoot, readDps } from './dps.ts';
import { checkEventRules, composeEvento, readPedido } from './events.ts';
import { issueNationalNfse } from './issue-nfse.ts';
import type { Ambiente, IssuedRecord, SefinStore } from './store.ts';
import { brasiliaDateTime, brasiliaDateTimeMillis } from './time.ts';
import { receiveDocument } from './xml.ts';

/**
 * Sefin Nacional as a kit service (../kit/server.ts): the routes table of the official API below
 * `/{producao|producaorestrita}/SefinNacional` and its rules (reception, signatures, DPS and event business rules),
 * answering in the official JSON shapes. Faults apply to it (the injected 500 in the official error shape).
 */

export const SANDBOX_APP_VERSION = 'SefinNac_Sbx_1.0.0';

export interface SefinServiceDeps {
  /** The key and certificate the sandbox signs NFS-e and events with. */
  signer: SandboxSigner;
  store: SefinStore;
  now: () => Date;
  logger: SandboxLogger;
  /** ISS rate (%) when the DPS has no pAliq and no parametrisation applies. */
  defaultIssRate: number;
  /** The simulated federal registry (a taker unknown to it: E0190/E0207). */
  registry: { isRegistered(document: string): boolean };
  /**
   * The E0037 adhesion rule (default true). A municipal provider's clone of this API (../sefin-clone/) turns it
   * off: its cities are not adherent to the national environment.
   */
  requireNationalAdherence?: boolean;
}

/** The transmitter's certificate, as Sefin reads it (identity from the ICP-Brasil fields). */
interface ClientCertificate {
  cnpj: string | null;
  cpf: string | null;
  subjectCN: string;
  validFrom: Date;
  validTo: Date;
}

function clientCertificateOf(peer: PeerCertificate | null): ClientCertificate | null {
  if (!peer) return null;
  try {
    return { ...readIcpBrasilIdentity(peer.raw), validFrom: peer.validFrom, validTo: peer.validTo };
  } catch {
    return { cnpj: null, cpf: null, subjectCN: '', validFrom: peer.validFrom, validTo: peer.validTo };
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

function gzipBase64Of(xml: string): string {
  return gzipSync(Buffer.from(xml, 'utf8')).toString('base64');
}

/** Case-insensitive field lookup (clients differ in casing). */
function field(body: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(body).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : body[key];
}

const ambienteOf = (req: SandboxRequest): Ambiente => (req.params.ambiente === 'producao' ? 1 : 2);

export function createSefinService(deps: SefinServiceDeps, admin: readonly SandboxAdminRoute[] = []): SandboxService {
  const { now, store, logger, defaultIssRate, registry } = deps;

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
  ): SandboxReply => ({
    status,
    body: { ...envelope(env, at), ...(idDps ? { idDPS: idDps } : {}), erros },
  });
  const responseErro = (env: Ambiente, at: Date, status: number, erro: MensagemProcessamento): SandboxReply => ({
    status,
    body: { ...envelope(env, at), erro },
  });

  function postNfse(env: Ambiente, cert: ClientCertificate | null, json: Record<string, unknown> | null): SandboxReply {
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

    const errors = checkDpsRules(dps, env, at, store, registry, deps.requireNationalAdherence ?? true);
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
    const record = issueNationalNfse({
      env,
      at,
      dps,
      dpsRaw: rootElementText(dpsXml, 'DPS'),
      registeredName,
      store,
      signer: deps.signer,
      verAplic: SANDBOX_APP_VERSION,
      defaultIssRate,
    });
    logger.info(`sandbox Sefin: NFS-e ${record.chaveAcesso} issued for DPS ${dps.id} (ambiente ${env})`);
    return record;
  }

  function getNfse(env: Ambiente, cert: ClientCertificate | null, key: string): SandboxReply {
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

  function getDps(env: Ambiente, cert: ClientCertificate | null, id: string, head: boolean): SandboxReply {
    const at = now();
    if (!cert) return responseErro(env, at, 401, httpMessage(401, 'noClientCertificate'));
    if (!/^DPS[0-9]{42}$/.test(id)) return responseErro(env, at, 400, httpMessage(400, 'badDpsId'));
    const record = store.findByDps(env, id);
    if (!record) return responseErro(env, at, 404, httpMessage(404, 'dpsNotFound'));
    if (head) return { status: 200 };
    if (!isActor(cert, record)) return responseErro(env, at, 403, httpMessage(403, 'nfseForbidden'));
    return { status: 200, body: { ...envelope(env, at), idDps: record.idDps, chaveAcesso: record.chaveAcesso } };
  }

  function postEvent(
    env: Ambiente,
    cert: ClientCertificate | null,
    key: string,
    json: Record<string, unknown> | null,
  ): SandboxReply {
    const at = now();
    if (!cert) return responseErro(env, at, 401, httpMessage(401, 'noClientCertificate'));
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
    const eventoXml = signEnveloped(unsigned, { rootName: 'evento', elementName: 'infEvento' }, deps.signer);
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

  function getEvent(
    env: Ambiente,
    cert: ClientCertificate | null,
    key: string,
    tipo: string,
    seq: string,
  ): SandboxReply {
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

  const cert = (req: SandboxRequest) => clientCertificateOf(req.clientCertificate);
  const simulatedFailure = (req: SandboxRequest): SandboxReply => {
    const failure = httpMessage(500, 'processingFailure', 'Falha simulada pelo sandbox.');
    return req.routeName === 'nfse.issue'
      ? nfseErrors(ambienteOf(req), now(), 500, [failure])
      : responseErro(ambienteOf(req), now(), 500, failure);
  };

  return {
    family: 'national',
    name: 'Sefin',
    mount: '/:ambiente(producao|producaorestrita)/SefinNacional',
    routes: [
      {
        name: 'nfse.issue',
        method: 'POST',
        path: '/nfse',
        handler: (req) => postNfse(ambienteOf(req), cert(req), req.json()),
      },
      { method: 'GET', path: '/nfse/:chave', handler: (req) => getNfse(ambienteOf(req), cert(req), req.params.chave) },
      {
        method: 'POST',
        path: '/nfse/:chave/eventos',
        handler: (req) => postEvent(ambienteOf(req), cert(req), req.params.chave, req.json()),
      },
      {
        method: 'GET',
        path: '/nfse/:chave/eventos/:tipo/:seq',
        handler: (req) => getEvent(ambienteOf(req), cert(req), req.params.chave, req.params.tipo, req.params.seq),
      },
      {
        method: ['GET', 'HEAD'],
        path: '/dps/:id',
        handler: (req) => getDps(ambienteOf(req), cert(req), req.params.id, req.method === 'HEAD'),
      },
    ],
    notFound: (req) =>
      responseErro(ambienteOf(req), now(), 404, httpMessage(404, 'routeNotFound', `${req.method} ${req.subPath}`)),
    errorReply: (req, err) =>
      err instanceof SandboxHttpError
        ? responseErro(ambienteOf(req), now(), err.status, { codigo: String(err.status), descricao: err.message })
        : responseErro(ambienteOf(req), now(), 500, httpMessage(500, 'processingFailure', err.message)),
    // the 500 of POST /nfse has the list shape (`erros`), every other one the single `erro`;
    // "commit, then drop" is about writes (the case that creates duplicates): reads are answered
    faults: { errorReply: simulatedFailure, isWrite: (req) => req.method === 'POST' },
    admin,
  };
}
