import { gunzipSync } from 'node:zlib';
import { readIcpBrasilIdentity } from '../kit/client-certificate.ts';
import {
  SandboxHttpError,
  type SandboxReply,
  type SandboxRequest,
  type SandboxRoute,
  type SandboxService,
} from '../kit/server.ts';
import type { SefinStore } from '../sefin/store.ts';

/**
 * Tiplan's clone of the Sefin API (briefs/providers-own.md §4; the engine: src/engines/dps-provider/sefin-clone.ts,
 * `tiplanDefinition`), below `/municipal/tiplan/<producao|producaorestrita>` standing for a city's
 * `…/api/adn/dps`:
 *
 *   POST /recepcao {"dpsXmlGZipB64"}                 → Sefin's reception rules and JSON (201 + NFS-e, `erros`)
 *   POST /evento {"pedidoRegistroEventoXmlGZipB64"}  → Sefin's event rules and JSON; the note is the event's chNFSe
 *   GET /chave-acesso/{nDPS}                         → `{idDps, chaveAcesso}` of the caller's DPS of that number
 *
 * and, as the national view of these cities' notes (ACBr sends ConsultarNFSePorChave and ConsultarEvento to Sefin
 * Nacional), Sefin's read routes GET /nfse/{chave} and GET /nfse/{chave}/eventos/{tipo}/{seq}. Sefin's own write
 * paths (POST /nfse, POST /nfse/{chave}/eventos) and GET /dps/{id} are not Tiplan's: 404.
 *
 * Tiplan's framework errors are ASP.NET Web API bodies `{"Message": …}`: a body that is not a JSON object or lacks
 * the field (400), a request without a client certificate (401; mTLS is required, the conservative reading), an
 * unknown route or DPS number (404), a server failure (500, also the injected one). Business errors are Sefin's.
 */

const message = (status: number, text: string): SandboxReply => ({ status, body: { Message: text } });

export const TIPLAN_INVALID_REQUEST = 'The request is invalid.';
export const TIPLAN_UNAUTHORIZED = 'Authorization has been denied for this request.';

function field(body: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(body).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : body[key];
}

/** The chNFSe of a gzip+base64 pedRegEvento, null when unreadable (Sefin's rules judge the rest). */
function chaveOfPedido(b64: unknown): string | null {
  if (typeof b64 !== 'string' || b64 === '') return null;
  try {
    const xml = gunzipSync(Buffer.from(b64, 'base64')).toString('utf8');
    return /<(?:\w+:)?chNFSe>\s*(\d{50})\s*<\/(?:\w+:)?chNFSe>/.exec(xml)?.[1] ?? null;
  } catch {
    return null;
  }
}

function clientRoot(req: SandboxRequest): string | null {
  if (!req.clientCertificate) return null;
  try {
    const identity = readIcpBrasilIdentity(req.clientCertificate.raw);
    const inscricao = identity.cnpj ?? identity.cpf;
    if (!inscricao) return null;
    return inscricao.length === 14 ? inscricao.slice(0, 8) : inscricao;
  } catch {
    return null;
  }
}

const rootOf = (inscricao: string) => (inscricao.length === 14 ? inscricao.slice(0, 8) : inscricao);

/** Reshapes the Sefin service (re-mounted for Tiplan) into Tiplan's routes and error bodies. */
export function tiplanService(sefin: SandboxService, store: SefinStore): Partial<SandboxService> {
  const route = (method: string, path: string): SandboxRoute => {
    const found = sefin.routes.find((r) => r.path === path && [r.method].flat().includes(method));
    if (!found) throw new Error(`the Sefin sandbox has no ${method} ${path}`);
    return found;
  };
  const issue = route('POST', '/nfse');
  const registerEvent = route('POST', '/nfse/:chave/eventos');
  const readNfse = route('GET', '/nfse/:chave');
  const readEvent = route('GET', '/nfse/:chave/eventos/:tipo/:seq');

  const recepcao = (req: SandboxRequest) => {
    if (!req.clientCertificate) return message(401, TIPLAN_UNAUTHORIZED);
    const json = req.json();
    const b64 = json ? field(json, 'dpsXmlGZipB64') : undefined;
    if (typeof b64 !== 'string' || b64 === '') return message(400, TIPLAN_INVALID_REQUEST);
    return issue.handler(req);
  };

  const evento = (req: SandboxRequest) => {
    if (!req.clientCertificate) return message(401, TIPLAN_UNAUTHORIZED);
    const json = req.json();
    const chave = chaveOfPedido(json ? field(json, 'pedidoRegistroEventoXmlGZipB64') : undefined);
    if (!chave) return message(400, TIPLAN_INVALID_REQUEST);
    return registerEvent.handler({ ...req, params: { ...req.params, chave } });
  };

  const chaveAcesso = (req: SandboxRequest): SandboxReply => {
    const root = clientRoot(req);
    if (!root) return message(401, TIPLAN_UNAUTHORIZED);
    const nDPS = req.params.nDPS ?? '';
    if (!/^\d{1,15}$/.test(nDPS)) return message(400, TIPLAN_INVALID_REQUEST);
    const env = req.params.ambiente === 'producao' ? 1 : 2;
    const wanted = nDPS.replace(/^0+(?=\d)/, '');
    const record = store
      .all()
      .filter((r) => r.environment === env && r.nDPS === wanted && rootOf(r.emitente) === root)
      .sort((a, b) => b.dhProc.localeCompare(a.dhProc))[0];
    if (!record) return message(404, `DPS ${nDPS} não encontrada.`);
    return {
      status: 200,
      body: {
        tipoAmbiente: env,
        versaoAplicativo: 'Tiplan_Sbx_1.0.0',
        dataHoraProcessamento: record.dhProc,
        idDps: record.idDps,
        chaveAcesso: record.chaveAcesso,
      },
    };
  };

  return {
    routes: [
      { name: 'nfse.issue', method: 'POST', path: '/recepcao', handler: recepcao },
      { name: 'evento', method: 'POST', path: '/evento', handler: evento },
      { method: 'GET', path: '/chave-acesso/:nDPS', handler: chaveAcesso },
      readNfse,
      readEvent,
    ],
    notFound: (req) =>
      message(404, `No HTTP resource was found that matches the request URI '${req.method} ${req.subPath}'.`),
    errorReply: (_req, err) =>
      err instanceof SandboxHttpError ? message(err.status, err.message) : message(500, 'An error has occurred.'),
    faults: { errorReply: () => message(500, 'An error has occurred.'), isWrite: (req) => req.method === 'POST' },
  };
}
