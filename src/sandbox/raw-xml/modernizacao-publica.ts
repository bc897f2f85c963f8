import { gzipSync } from 'node:zlib';
import { authorizationOf } from '../kit/client-certificate.ts';
import { type SandboxReply, type SandboxService, SandboxHttpError } from '../kit/server.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import {
  ambienteOf,
  certificateInscricao,
  isNationalView,
  isXmlContent,
  issueNfse,
  nationalViewRoutes,
  receiveDps,
  storeFor,
} from './core.ts';

/**
 * Modernização Pública's reception (briefs/providers-own.md §4) below
 * `/municipal/modernizacaopublica/{producao|producaorestrita}`:
 *
 *   POST /ReceberDPS.rule?sys=NFE   application/xml, the raw signed DPS →
 *        200 {"sucesso":"true","mensagem":"NFS-e gerada com sucesso.","chaveAcesso","numeroNfse","nfseXmlGZipB64"}
 *        400 {"sucesso":"false","mensagem":"<national code> - <text>"} (schema, signature, rules; E0014, E0006 …)
 *   + the national view (GET /dps/{id}, /nfse/{chave}, …: ACBr sends ConsultarNFSeRps/PorChave of these cities to
 *     Sefin), with the client certificate only.
 *
 * The success shape is this sandbox's conservative reading (the brief documents only the error one); the engine
 * (src/engines/dps-provider/modernizacao-publica.ts) reads success only with `sucesso` "true" and a readable NFS-e.
 * No cancellation service is documented, so none is served. Auth: the TLS client certificate (CNPJ root = DPS
 * emitter) AND HTTP Basic; without a certificate 403, without valid Basic credentials 401, both in the error
 * shape. Valid credentials: any non-empty user and password until a list is set
 * (`PUT /__sandbox/modernizacaopublica/settings {"users": [{"user","password"}]}`).
 */

export interface ModernizacaoPublicaSettings {
  users: { user: string; password: string }[] | null;
}

const failure = (status: number, mensagem: string): SandboxReply => ({
  status,
  body: { sucesso: 'false', mensagem },
});

export function createModernizacaoPublicaService(
  deps: MunicipalSandboxDependencies,
  initial: Partial<ModernizacaoPublicaSettings> = {},
): SandboxService {
  const family = 'dps-provider-modernizacaopublica';
  const store = storeFor(family, deps.dataDir, (m) => deps.logger.warn(m));
  const settings: ModernizacaoPublicaSettings = { users: initial.users ?? null };

  return {
    family,
    name: 'ModernizacaoPublica',
    mount: '/municipal/modernizacaopublica/:ambiente(producao|producaorestrita)',
    routes: [
      {
        name: 'receberdps',
        method: 'POST',
        path: '/ReceberDPS.rule',
        handler(req) {
          if (req.query.get('sys') !== 'NFE') return failure(400, 'Parâmetro sys=NFE ausente.');
          if (!isXmlContent(req)) return failure(415, 'Envie a DPS como application/xml.');
          const env = ambienteOf(req);
          const at = deps.now();
          const accepted = receiveDps(req.body, env, req.clientCertificate, store, at);
          if (!accepted.ok) {
            return failure(accepted.status, accepted.errors.map((e) => `${e.codigo} - ${e.descricao}`).join('; '));
          }
          const record = issueNfse(env, at, accepted.value, store, deps.signer);
          deps.logger.info(`sandbox ModernizacaoPublica: NFS-e ${record.chaveAcesso} issued for ${record.idDps}`);
          return {
            status: 200,
            body: {
              sucesso: 'true',
              mensagem: 'NFS-e gerada com sucesso.',
              chaveAcesso: record.chaveAcesso,
              numeroNfse: record.nNFSe,
              nfseXmlGZipB64: gzipSync(Buffer.from(record.nfseXml, 'utf8')).toString('base64'),
            },
          };
        },
      },
      ...nationalViewRoutes(store),
    ],
    before(req) {
      if (!certificateInscricao(req.clientCertificate)) {
        return failure(403, 'Certificado de cliente (CNPJ/CPF) ausente na conexão.');
      }
      if (isNationalView(req)) return null;
      const auth = authorizationOf(req.headers);
      const valid =
        auth?.scheme === 'basic' &&
        !!auth.user &&
        !!auth.password &&
        (settings.users === null || settings.users.some((u) => u.user === auth.user && u.password === auth.password));
      return valid ? null : failure(401, 'Usuário ou senha do web service (WSUser/WSSenha) inválidos.');
    },
    notFound: (req) => failure(404, `Recurso não encontrado: ${req.method} ${req.subPath}`),
    errorReply: (_req, err) =>
      err instanceof SandboxHttpError ? failure(err.status, err.message) : failure(500, 'Falha interna do servidor.'),
    faults: {
      errorReply: () => failure(500, 'Falha simulada pelo sandbox.'),
      isWrite: (req) => req.method === 'POST',
    },
    admin: [
      {
        method: 'PUT',
        path: '/__sandbox/modernizacaopublica/settings',
        handler: (req) => {
          const users = req.json()?.users;
          const valid =
            users === null ||
            (Array.isArray(users) &&
              users.every(
                (u) => u && typeof u === 'object' && typeof u.user === 'string' && typeof u.password === 'string',
              ));
          if (!valid) throw new SandboxHttpError(400, 'body must be {"users": null | [{"user","password"}]}');
          settings.users = users as ModernizacaoPublicaSettings['users'];
          return { status: 200, body: { users: settings.users?.map((u) => u.user) ?? null } };
        },
      },
    ],
  };
}

export const modernizacaoPublicaSandbox: MunicipalSandbox = {
  engine: 'dps-provider:modernizacaopublica',
  slug: 'modernizacaopublica',
  create: (deps) => createModernizacaoPublicaService(deps),
};
