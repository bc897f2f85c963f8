import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { JsonlFile } from '../kit/jsonl.ts';
import { registerSettingsRoute } from '../kit/register-settings.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';

/**
 * Bauhaus ("Prefeitura Moderna") own JSON layout below `/municipal/own-layout-bauhaus/{producao|producaorestrita}`,
 * the `/ws/services/<operation>` API of ACBr `Bauhaus.Provider.pas` / `Bauhaus.GravarJson.pas`:
 *
 *   POST /gerar      {DadosNota:{…}} → 200 {DadosNfse:{Numero, Mensagem}}
 *   GET  /consultar?NumeroRps=N | ?NumeroNfse=N → 200 {DadosNfse:{NumeroNfse, Rps{Numero, Serie}, DataEmissao,
 *                    LinkNfse, CodigoValidacao, SituacaoNfse 1|2, Cancelamento{Data, Motivo}}}; unknown → 404 040
 *   POST /cancelar   {DadosNota:{Numero, Cancelamento{Motivo}, Prestador{InscricaoMunicipal}}}
 *                    → 200 {DadosNfse:{Numero, DataCancelamento}}
 *
 * Auth: `Authorization: <chave>` (no scheme), no client certificate. Refusals are
 * `{Message:{Code:"ERRO-NNN", Message, MessageDev, Detail, DetailDev, DetailError:[…]}}` (the shape ACBr reads; its
 * codes are not published, these are the sandbox's): 001 key (401), 010 the key's inscrição municipal differs from
 * the note's, 011–019 layout (400), 020 RPS already issued, 030 already cancelled, 040 not found. Keys: any non-empty
 * one until a list is set (`PUT /__sandbox/own-layout-bauhaus/settings {"keys": {"<chave>": {"inscricaoMunicipal":
 * "…"}}}`). Notes are kept in `<dataDir>/own-layout-bauhaus/notes.jsonl`.
 */

interface Note {
  env: string;
  key: string;
  numero: string;
  rpsNumero: string;
  rpsSerie: string;
  codigo: string;
  issuedAt: string;
  cancelledAt: string | null;
  motivo: string | null;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

function refuse(status: number, code: string, message: string, details: string[] = []): SandboxReply {
  return {
    status,
    headers: JSON_HEADERS,
    body: JSON.stringify({
      Message: {
        Code: `ERRO-${code}`,
        Message: message,
        MessageDev: '',
        Detail: '',
        DetailDev: '',
        DetailError: details,
      },
    }),
  };
}

const ok = (body: unknown): SandboxReply => ({ status: 200, headers: JSON_HEADERS, body: JSON.stringify(body) });

type Json = Record<string, unknown>;
const obj = (value: unknown): Json | null =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
const isInt = (value: unknown) => typeof value === 'number' && Number.isInteger(value);
const isNum = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
const isStr = (value: unknown) => typeof value === 'string';

/** The documented structure of DadosNota (ACBr Bauhaus.GravarJson): the first broken rule, or null. */
function layoutError(nota: Json): string | null {
  if (!isInt(nota.MunicipioPrestacao) || String(nota.MunicipioPrestacao).length !== 7)
    return 'MunicipioPrestacao (IBGE)';
  if (![1, 2, 3, 4, 5, 6].includes(nota.NaturezaOperacao as number)) return 'NaturezaOperacao';
  if (nota.IssRetido !== 'S' && nota.IssRetido !== 'N') return 'IssRetido (S|N)';
  const atividade = obj(nota.Atividade);
  if (!atividade || !isInt(atividade.Codigo) || (atividade.Codigo as number) <= 0) return 'Atividade.Codigo';
  if (!isStr(atividade.CodigoLc116) || !/^\d{2}\.\d{2}$/.test(atividade.CodigoLc116 as string)) {
    return 'Atividade.CodigoLc116';
  }
  const prestador = obj(nota.Prestador);
  if (!prestador || !isStr(prestador.InscricaoMunicipal) || !prestador.InscricaoMunicipal)
    return 'Prestador.InscricaoMunicipal';
  const tomador = obj(nota.Tomador);
  if (!tomador || !['F', 'J', 'E'].includes(tomador.TipoPessoa as string)) return 'Tomador.TipoPessoa';
  const doc = String(tomador.NrDocumento ?? '');
  if ((tomador.TipoPessoa === 'F' && !/^\d{11}$/.test(doc)) || (tomador.TipoPessoa === 'J' && !/^\d{14}$/.test(doc))) {
    return 'Tomador.NrDocumento';
  }
  if (!isStr(tomador.RazaoSocial) || !tomador.RazaoSocial) return 'Tomador.RazaoSocial';
  const endereco = obj(tomador.Endereco);
  if (!endereco || !isInt(endereco.Municipio) || !isInt(endereco.Cep)) return 'Tomador.Endereco';
  if (!obj(tomador.Contato)) return 'Tomador.Contato';
  const rps = obj(nota.Rps);
  if (!rps || !isInt(rps.Numero) || (rps.Numero as number) <= 0 || !isInt(rps.Serie) || rps.Tipo !== 1) return 'Rps';
  if (!isStr(rps.DataEmissao) || Number.isNaN(new Date(rps.DataEmissao as string).getTime())) return 'Rps.DataEmissao';
  const servicos = nota.Servicos;
  if (!Array.isArray(servicos) || servicos.length === 0) return 'Servicos';
  for (const item of servicos) {
    const s = obj(item);
    if (!s || !isStr(s.Descricao) || !s.Descricao || !isNum(s.Quantidade) || !isNum(s.ValorUnitario))
      return 'Servicos[]';
  }
  const valores = obj(nota.Valores);
  if (!valores) return 'Valores';
  for (const name of ['ValorServicos', 'BaseCalculo', 'Aliquota', 'ValorIss', 'ValorLiquidoNota', 'ValorTotalNota']) {
    if (!isNum(valores[name])) return `Valores.${name}`;
  }
  const expected = Math.round((((valores.BaseCalculo as number) * (valores.Aliquota as number)) / 100) * 100) / 100;
  if (Math.abs(expected - (valores.ValorIss as number)) > 0.01) return 'Valores.ValorIss (BaseCalculo × Aliquota %)';
  return null;
}

export function createBauhausService(deps: MunicipalSandboxDependencies): SandboxService {
  const notes: Note[] = [];
  const numbers = new Map<string, number>();
  let keys: Record<string, { inscricaoMunicipal?: string }> | null = null;
  const store = deps.dataDir ? new JsonlFile<Note>(join(deps.dataDir, 'own-layout-bauhaus', 'notes.jsonl')) : null;
  store?.replay(
    (line) => {
      const index = notes.findIndex((n) => n.env === line.env && n.numero === line.numero);
      if (index >= 0) notes[index] = line;
      else notes.push(line);
      numbers.set(line.env, Math.max(numbers.get(line.env) ?? 0, Number(line.numero)));
    },
    (m) => deps.logger.warn(m),
  );

  /** The caller's key, or the refusal. */
  function keyOf(req: SandboxRequest): string | SandboxReply {
    const key = String(req.headers.authorization ?? '').trim();
    if (!key || /^(basic|bearer)\s/i.test(key) || (keys && !keys[key])) {
      return refuse(401, '001', 'Chave de autorização inválida');
    }
    return key;
  }

  const view = (n: Note) => ({
    DadosNfse: {
      NumeroNfse: n.numero,
      Rps: { Numero: n.rpsNumero, Serie: n.rpsSerie },
      DataEmissao: n.issuedAt,
      LinkNfse: `https://nfse.prefeituramoderna.com.br/autenticidade?codigo=${n.codigo}`,
      CodigoValidacao: n.codigo,
      SituacaoNfse: n.cancelledAt ? '2' : '1',
      ...(n.cancelledAt ? { Cancelamento: { Data: n.cancelledAt, Motivo: n.motivo } } : {}),
    },
  });

  function gerar(req: SandboxRequest): SandboxReply {
    const key = keyOf(req);
    if (typeof key !== 'string') return key;
    const nota = obj(req.json()?.DadosNota);
    if (!nota) return refuse(400, '011', 'Informe o objeto DadosNota');
    const error = layoutError(nota);
    if (error) return refuse(400, '012', 'Campo inválido ou ausente', [error]);
    const im = String(obj(nota.Prestador)?.InscricaoMunicipal);
    const registered = keys?.[key]?.inscricaoMunicipal;
    if (registered && registered !== im) {
      return refuse(422, '010', 'Inscrição municipal não pertence ao contribuinte da chave de autorização');
    }
    const env = req.params.ambiente;
    const rps = obj(nota.Rps)!;
    const rpsNumero = String(rps.Numero);
    const rpsSerie = String(rps.Serie);
    if (notes.some((n) => n.env === env && n.key === key && n.rpsNumero === rpsNumero && n.rpsSerie === rpsSerie)) {
      return refuse(422, '020', 'RPS já convertido em NFS-e', [`RPS ${rpsNumero} série ${rpsSerie}`]);
    }
    const next = (numbers.get(env) ?? 0) + 1;
    numbers.set(env, next);
    const note: Note = {
      env,
      key,
      numero: String(next),
      rpsNumero,
      rpsSerie,
      codigo: createHash('sha256')
        .update(`${env}|${key}|${rpsNumero}|${rpsSerie}`)
        .digest('hex')
        .slice(0, 16)
        .toUpperCase(),
      issuedAt: `${new Date(deps.now().getTime() - 3 * 3600_000).toISOString().slice(0, 19)}-03:00`,
      cancelledAt: null,
      motivo: null,
    };
    notes.push(note);
    store?.append(note);
    deps.logger.info(`sandbox Bauhaus: NFS-e ${note.numero} issued for RPS ${rpsNumero}`);
    return ok({ DadosNfse: { Numero: note.numero, Mensagem: 'NFS-e gerada com sucesso' } });
  }

  function consultar(req: SandboxRequest): SandboxReply {
    const key = keyOf(req);
    if (typeof key !== 'string') return key;
    const env = req.params.ambiente;
    const byRps = req.query.get('NumeroRps');
    const byNumber = req.query.get('NumeroNfse');
    if (!byRps && !byNumber) return refuse(400, '013', 'Informe NumeroRps ou NumeroNfse');
    const mine = notes.filter((n) => n.env === env && n.key === key);
    const note = byRps ? mine.find((n) => n.rpsNumero === byRps) : mine.find((n) => n.numero === byNumber);
    return note ? ok(view(note)) : refuse(404, '040', 'NFS-e não encontrada');
  }

  function cancelar(req: SandboxRequest): SandboxReply {
    const key = keyOf(req);
    if (typeof key !== 'string') return key;
    const nota = obj(req.json()?.DadosNota);
    const motivo = obj(nota?.Cancelamento)?.Motivo;
    if (!nota || !isInt(nota.Numero) || !isStr(motivo) || !(motivo as string).trim()) {
      return refuse(400, '014', 'Informe DadosNota.Numero e Cancelamento.Motivo');
    }
    const env = req.params.ambiente;
    const note = notes.find((n) => n.env === env && n.key === key && n.numero === String(nota.Numero));
    if (!note) return refuse(404, '040', 'NFS-e não encontrada');
    const registered = keys?.[key]?.inscricaoMunicipal;
    if (registered && String(obj(nota.Prestador)?.InscricaoMunicipal ?? '') !== registered) {
      return refuse(422, '010', 'Inscrição municipal não pertence ao contribuinte da chave de autorização');
    }
    if (note.cancelledAt) return refuse(422, '030', 'NFS-e já cancelada');
    note.cancelledAt = `${new Date(deps.now().getTime() - 3 * 3600_000).toISOString().slice(0, 19)}-03:00`;
    note.motivo = motivo as string;
    store?.append(note);
    deps.logger.info(`sandbox Bauhaus: NFS-e ${note.numero} cancelled`);
    return ok({ DadosNfse: { Numero: note.numero, DataCancelamento: note.cancelledAt } });
  }

  return {
    family: 'own-layout',
    name: 'Bauhaus',
    mount: '/municipal/own-layout-bauhaus/:ambiente(producao|producaorestrita)',
    routes: [
      { method: 'POST', path: '/gerar', name: 'gerar', handler: gerar },
      { method: 'GET', path: '/consultar', name: 'consultar', handler: consultar },
      { method: 'POST', path: '/cancelar', name: 'cancelar', handler: cancelar },
    ],
    notFound: () => refuse(404, '404', 'Recurso não encontrado'),
    errorReply: (_req, err) => refuse(500, '500', err.message),
    faults: { errorReply: () => refuse(503, '503', 'Serviço indisponível') },
    admin: [
      registerSettingsRoute<NonNullable<typeof keys>>({
        slug: 'own-layout-bauhaus',
        field: 'keys',
        set: (given) => {
          keys = given;
        },
      }),
    ],
  };
}

export const bauhausSandbox: MunicipalSandbox = {
  engine: 'own-layout:bauhaus',
  slug: 'own-layout-bauhaus',
  create: createBauhausService,
};
