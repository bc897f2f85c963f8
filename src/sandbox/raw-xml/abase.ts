import { createHash } from 'node:crypto';
import { authorizationOf } from '../kit/client-certificate.ts';
import { type SandboxReply, type SandboxRequest, type SandboxService, SandboxHttpError } from '../kit/server.ts';
import { escapeXml } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import type { MensagemProcessamento } from '../sefin/codes.ts';
import { stripZeros, inscricaoRoot } from '../sefin/dps.ts';
import type { Ambiente, IssuedRecord } from '../sefin/store.ts';
import { brasiliaDateTime } from '../sefin/time.ts';
import {
  ambienteOf,
  certificateInscricao,
  isNationalView,
  isXmlContent,
  issueNfse,
  nationalViewRoutes,
  receiveDps,
  registerEvent,
  storeFor,
  withoutDeclaration,
} from './core.ts';

/**
 * ABase's "API nacional" (briefs/providers-own.md §4) below `/municipal/abase/{producao|producaorestrita}`:
 *
 *   POST /recepcionardps           application/xml, the raw signed DPS → 200 <RecepcionarDpsResposta>{Protocolo,
 *                                  DataHoraRecebimento}; reception errors (schema, signature, rules) → 400 <Erros>
 *   GET  /consultarlotedps/{prot}  <ConsultarLoteDpsResposta>{Protocolo, Situacao EM_PROCESSAMENTO} while the lot
 *                                  is held, then {Protocolo, StatusProcessamento PROCESSADO, ChaveAcesso, NFSe}
 *   GET  /consultarnfsedps/{nDPS}  the processed shape for the caller's note with that number; 404 <Erros> if none
 *   POST /CancelarNfse             application/xml, the signed pedRegEvento → 200 <CancelarNfseResponse>{dhProc,
 *                                  the national evento}; refusals (E0840 …) → 400 <Erros>
 *   + the national view (GET /dps/{id}, /nfse/{chave}, /nfse/{chave}/eventos/{tipo}/{seq}; ACBr sends ConsultarEvento
 *     of these cities to Sefin)
 *
 * Auth: the TLS client certificate (its CNPJ root must be the DPS emitter's) AND `Authorization: Bearer <token>`.
 * Without a certificate: 403 <Erros>; without a valid Bearer: 401 with a bare `<Erro>text</Erro>` (the other error
 * shape the brief documents). Valid tokens: any non-empty one until a list is set (`PUT /__sandbox/abase/settings
 * {"tokens": [...]}`). Each DPS is processed at reception (a refusal is answered at once, with the national codes);
 * the lot's status reports it EM_PROCESSAMENTO for `pendingMs` (default 1000, settable the same way), then
 * PROCESSADO. Protocols are derived from the note's key, so they survive a restart with the store.
 */

export interface AbaseSettings {
  /** how long a received DPS is reported EM_PROCESSAMENTO by the lot query */
  pendingMs: number;
  /** the valid Bearer tokens; null accepts any non-empty token */
  tokens: string[] | null;
}

const XML = { 'content-type': 'application/xml; charset=utf-8' };
const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

function xmlReply(status: number, body: string): SandboxReply {
  return { status, body: `${DECLARATION}${body}`, headers: XML };
}

function erros(status: number, errors: MensagemProcessamento[]): SandboxReply {
  const items = errors
    .map(
      (e) =>
        `<Erro><Codigo>${escapeXml(e.codigo)}</Codigo><Descricao>${escapeXml(e.descricao)}</Descricao>` +
        `<Correcao>${escapeXml(e.complemento ?? '')}</Correcao></Erro>`,
    )
    .join('');
  return xmlReply(status, `<Erros>${items}</Erros>`);
}

const protocolOf = (env: Ambiente, chave: string) =>
  createHash('sha256').update(`${env}|${chave}`).digest('hex').slice(0, 32).toUpperCase();

function processed(root: string, record: IssuedRecord, protocol: string | null): string {
  return (
    `<${root}>${protocol ? `<Protocolo>${protocol}</Protocolo>` : ''}` +
    '<StatusProcessamento>PROCESSADO</StatusProcessamento>' +
    `<ChaveAcesso>${record.chaveAcesso}</ChaveAcesso>${withoutDeclaration(record.nfseXml)}</${root}>`
  );
}

export function createAbaseService(
  deps: MunicipalSandboxDependencies,
  initial: Partial<AbaseSettings> = {},
): SandboxService {
  const family = 'dps-provider-abase';
  const store = storeFor(family, deps.dataDir, (m) => deps.logger.warn(m));
  const settings: AbaseSettings = { pendingMs: initial.pendingMs ?? 1000, tokens: initial.tokens ?? null };
  /** protocol → the note and when its lot may be reported processed */
  const lots = new Map<string, { env: Ambiente; chave: string; readyAt: number }>();
  for (const record of store.all()) {
    lots.set(protocolOf(record.environment, record.chaveAcesso), {
      env: record.environment,
      chave: record.chaveAcesso,
      readyAt: 0,
    });
  }

  function receive(req: SandboxRequest): SandboxReply {
    if (!isXmlContent(req)) return erros(415, [{ codigo: '415', descricao: 'Envie a DPS como application/xml.' }]);
    const env = ambienteOf(req);
    const at = deps.now();
    const accepted = receiveDps(req.body, env, req.clientCertificate, store, at);
    if (!accepted.ok) return erros(accepted.status, accepted.errors);
    const record = issueNfse(env, at, accepted.value, store, deps.signer);
    const protocol = protocolOf(env, record.chaveAcesso);
    lots.set(protocol, { env, chave: record.chaveAcesso, readyAt: at.getTime() + settings.pendingMs });
    deps.logger.info(`sandbox ABase: DPS ${record.idDps} received under protocol ${protocol}`);
    return xmlReply(
      200,
      `<RecepcionarDpsResposta><Protocolo>${protocol}</Protocolo>` +
        `<DataHoraRecebimento>${brasiliaDateTime(at)}</DataHoraRecebimento></RecepcionarDpsResposta>`,
    );
  }

  function lot(req: SandboxRequest): SandboxReply {
    const env = ambienteOf(req);
    const protocol = req.params.protocolo;
    const held = lots.get(protocol);
    const record = held && held.env === env ? store.findByKey(env, held.chave) : undefined;
    if (!held || !record) return erros(404, [{ codigo: 'E404', descricao: `Protocolo ${protocol} não encontrado.` }]);
    if (!owns(req, record)) return erros(403, [{ codigo: 'E403', descricao: 'Protocolo de outro contribuinte.' }]);
    if (deps.now().getTime() < held.readyAt) {
      return xmlReply(
        200,
        `<ConsultarLoteDpsResposta><Protocolo>${protocol}</Protocolo><Situacao>EM_PROCESSAMENTO</Situacao></ConsultarLoteDpsResposta>`,
      );
    }
    return xmlReply(200, processed('ConsultarLoteDpsResposta', record, protocol));
  }

  function byNumber(req: SandboxRequest): SandboxReply {
    const env = ambienteOf(req);
    const own = certificateInscricao(req.clientCertificate)!;
    const nDPS = stripZeros(req.params.nDPS);
    const record = store
      .all()
      .find((r) => r.environment === env && r.nDPS === nDPS && inscricaoRoot(r.emitente) === inscricaoRoot(own));
    if (!record) return erros(404, [{ codigo: 'E404', descricao: `Nenhuma NFS-e para a DPS número ${nDPS}.` }]);
    return xmlReply(200, processed('ConsultarNfseDpsResposta', record, null));
  }

  function cancel(req: SandboxRequest): SandboxReply {
    if (!isXmlContent(req)) return erros(415, [{ codigo: '415', descricao: 'Envie o pedido como application/xml.' }]);
    const at = deps.now();
    const done = registerEvent(req.body, ambienteOf(req), req.clientCertificate, store, at, deps.signer);
    if (!done.ok) return erros(done.status, done.errors);
    deps.logger.info(`sandbox ABase: NFS-e ${done.value.record.chaveAcesso} cancelled`);
    return xmlReply(
      200,
      `<CancelarNfseResponse><dhProc>${brasiliaDateTime(at)}</dhProc>${withoutDeclaration(done.value.eventoXml)}</CancelarNfseResponse>`,
    );
  }

  const owns = (req: SandboxRequest, record: IssuedRecord) => {
    const own = certificateInscricao(req.clientCertificate);
    return !!own && inscricaoRoot(own) === inscricaoRoot(record.emitente);
  };

  return {
    family,
    name: 'ABase',
    mount: '/municipal/abase/:ambiente(producao|producaorestrita)',
    routes: [
      { name: 'recepcionardps', method: 'POST', path: '/recepcionardps', handler: receive },
      { method: 'GET', path: '/consultarlotedps/:protocolo', handler: lot },
      { method: 'GET', path: '/consultarnfsedps/:nDPS', handler: byNumber },
      { method: 'POST', path: '/CancelarNfse', handler: cancel },
      ...nationalViewRoutes(store),
    ],
    before(req) {
      if (!certificateInscricao(req.clientCertificate)) {
        return erros(403, [{ codigo: 'E1200', descricao: 'Certificado de cliente (CNPJ/CPF) ausente na conexão.' }]);
      }
      if (isNationalView(req)) return null;
      const auth = authorizationOf(req.headers);
      const valid = auth?.scheme === 'bearer' && (settings.tokens === null || settings.tokens.includes(auth.token));
      return valid ? null : xmlReply(401, '<Erro>Token de acesso (WSChaveAcesso) ausente ou inválido.</Erro>');
    },
    notFound: (req) =>
      erros(404, [{ codigo: '404', descricao: `Recurso não encontrado: ${req.method} ${req.subPath}` }]),
    errorReply: (_req, err) =>
      err instanceof SandboxHttpError
        ? erros(err.status, [{ codigo: String(err.status), descricao: err.message }])
        : erros(500, [{ codigo: '500', descricao: 'Falha interna do servidor.' }]),
    faults: {
      errorReply: () => erros(500, [{ codigo: '500', descricao: 'Falha simulada pelo sandbox.' }]),
      isWrite: (req) => req.method === 'POST',
    },
    admin: [
      {
        method: 'PUT',
        path: '/__sandbox/abase/settings',
        handler: (req) => {
          const body = req.json() ?? {};
          if (body.pendingMs !== undefined) {
            if (typeof body.pendingMs !== 'number' || body.pendingMs < 0) {
              throw new SandboxHttpError(400, 'pendingMs must be a number ≥ 0');
            }
            settings.pendingMs = body.pendingMs;
          }
          if (body.tokens !== undefined) {
            const tokens = body.tokens;
            if (tokens !== null && !(Array.isArray(tokens) && tokens.every((t) => typeof t === 'string' && t))) {
              throw new SandboxHttpError(400, 'tokens must be null or a list of non-empty strings');
            }
            settings.tokens = tokens as string[] | null;
          }
          return { status: 200, body: settings };
        },
      },
    ],
  };
}

export const abaseSandbox: MunicipalSandbox = {
  engine: 'dps-provider:abase',
  slug: 'abase',
  create: (deps) => createAbaseService(deps),
};
