import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { validateXml } from '../../xml/xsd.ts';
import { JsonlFile } from '../kit/jsonl.ts';
import { registerSettingsRoute } from '../kit/register-settings.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { child, childElements, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';

/**
 * E&L's legacy `RpsServiceService` (own layout, ACBr EL 1.00) below `/municipal/own-layout-el/{producao|producaorestrita}`:
 * SOAP 1.1, one URL, the operation element in the WSDL's namespace with unqualified parameters (WSDL
 * shared/reference/providers/el/RpsServiceService-legacy.wsdl; ACBr EL.Provider.pas; two independent clients). No
 * client certificate: the web-service password opens a session.
 *
 *   autenticarContribuinte(identificacaoPrestador, senha)            → return = hash (EL001 bad password)
 *   finalizarSessao(hashIdentificador)                               → return = true
 *   EnviarLoteRpsEnvio(identificacaoPrestador, hashIdentificador, arquivo = LoteRps)
 *        → return{numeroLote, dataRecebimento, numeroProtocolo}; refusals at reception: EL002 session, EL003 the
 *          official LoteRps XSD (schemas/el/el-nfse-legacy.xsd), E70 lote/RPS prestador, E50 inscrição municipal,
 *          E10 RPS already received
 *   ConsultarSituacaoLoteRpsEnvio(identificacaoPrestador, numeroProtocolo) → return{numeroLote, situacaoLoteRps}
 *        (1 não processado for `holdMs`, then 4 processado com sucesso; E86 unknown protocol)
 *   ConsultarLoteRpsEnvio(identificacaoPrestador, numeroProtocolo)    → return/notasFiscais/nfeRpsNotaFiscal…
 *        (E178 while not processed)
 *   ConsultarNfseRpsEnvio(identificacaoRps, identificacaoPrestador)   → return/nfeRpsNotaFiscal, or an empty return
 *   CancelarNfseMotivoEnvio(identificacaoPrestador, senha, numeroNfse, motivoCancelamento)
 *        → return/nfeRpsNotaFiscal (situacao C); E212 unknown note, E79 already cancelled
 *
 * Errors are `return/mensagens` texts `CÓDIGO - descrição - correção`. EL does not publish its codes: the E-codes are
 * the ABRASF table's for the same refusals, the EL0xx ones this sandbox's. Users: any CNPJ with a non-empty password
 * until a list is set (`PUT /__sandbox/own-layout-el/settings {"users": {"<cnpj>": {"senha": "…",
 * "inscricaoMunicipal": "…"}}}`). Notes and lotes are kept in `<dataDir>/own-layout-el/{notes,lotes}.jsonl`.
 */

const SERVICE_NS = 'http://des36.el.com.br:8080/el-issonline/';
const SOAP_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const SESSION_MS = 30 * 60_000;

interface Note {
  env: string;
  cnpj: string;
  numero: string;
  idNota: string;
  rpsNumero: string;
  rpsSerie: string;
  protocolo: string;
  issuedAt: string;
  cancelled: boolean;
  motivo: string | null;
}

interface Lote {
  env: string;
  cnpj: string;
  protocolo: string;
  numeroLote: string;
  receivedAt: number;
  rps: { numero: string; serie: string }[];
  settled: boolean;
}

class Refusal extends Error {
  constructor(readonly messages: string[]) {
    super(messages.join('; '));
  }
}

const XML_HEADERS = { 'content-type': 'text/xml; charset=utf-8' };

function envelope(operation: string, inner: string): SandboxReply {
  return {
    status: 200,
    headers: XML_HEADERS,
    body:
      `<?xml version="1.0" encoding="UTF-8"?><S:Envelope xmlns:S="${SOAP_NS}"><S:Body>` +
      `<ns2:${operation}Response xmlns:ns2="${SERVICE_NS}"><return>${inner}</return></ns2:${operation}Response>` +
      '</S:Body></S:Envelope>',
  };
}

function fault(status: number, code: string, reason: string): SandboxReply {
  return {
    status,
    headers: XML_HEADERS,
    body:
      `<?xml version="1.0" encoding="UTF-8"?><S:Envelope xmlns:S="${SOAP_NS}"><S:Body><S:Fault>` +
      `<faultcode>S:${code}</faultcode><faultstring>${escapeXml(reason)}</faultstring></S:Fault></S:Body></S:Envelope>`,
  };
}

const mensagens = (messages: string[]) => messages.map((m) => `<mensagens>${escapeXml(m)}</mensagens>`).join('');

/** Brasília local date-time without offset, as the service writes it. */
const localDateTime = (at: Date) => new Date(at.getTime() - 3 * 3600_000).toISOString().slice(0, 19);

function noteXml(note: Note): string {
  return (
    `<nfeRpsNotaFiscal><idNota>${note.idNota}</idNota><idRps>${note.rpsNumero}${note.rpsSerie}</idRps>` +
    `<numero>${note.numero}</numero><dataProcessamento>${note.issuedAt}</dataProcessamento>` +
    `<situacao>${note.cancelled ? 'C' : 'E'}</situacao><rpsNumero>${note.rpsNumero}</rpsNumero></nfeRpsNotaFiscal>`
  );
}

/** The operation name of a SOAP request (for the fault plan's "is it a write" question). */
function operationOf(req: SandboxRequest): string | null {
  return /<(?:[\w-]+:)?Body[^>]*>\s*<(?:[\w-]+:)?([\w]+)/.exec(req.body.toString('utf8'))?.[1] ?? null;
}

export function createElLegacyService(deps: MunicipalSandboxDependencies & { holdMs?: number }): SandboxService {
  const holdMs = deps.holdMs ?? 0;
  const notes: Note[] = [];
  const lotes = new Map<string, Lote>();
  const sessions = new Map<string, { env: string; cnpj: string; expires: number }>();
  const numbers = new Map<string, number>();
  let users: Record<string, { senha: string; inscricaoMunicipal?: string }> | null = null;
  const store = deps.dataDir ? new JsonlFile<Note>(join(deps.dataDir, 'own-layout-el', 'notes.jsonl')) : null;
  const loteStore = deps.dataDir ? new JsonlFile<Lote>(join(deps.dataDir, 'own-layout-el', 'lotes.jsonl')) : null;
  loteStore?.replay(
    (line) => lotes.set(line.protocolo, line),
    (m) => deps.logger.warn(m),
  );
  store?.replay(
    (line) => {
      const index = notes.findIndex((n) => n.env === line.env && n.cnpj === line.cnpj && n.numero === line.numero);
      if (index >= 0) notes[index] = line;
      else notes.push(line);
      numbers.set(line.env, Math.max(numbers.get(line.env) ?? 0, Number(line.numero)));
    },
    (m) => deps.logger.warn(m),
  );

  const validUser = (cnpj: string, senha: string) =>
    /^\d{14}$|^\d{11}$/.test(cnpj) && senha !== '' && (!users || users[cnpj]?.senha === senha);

  /** Processes every lote whose hold has passed: each RPS becomes a note. */
  function settle(): void {
    const now = deps.now();
    for (const lote of lotes.values()) {
      if (lote.settled || now.getTime() - lote.receivedAt < holdMs) continue;
      for (const rps of lote.rps) {
        const next = (numbers.get(lote.env) ?? 0) + 1;
        numbers.set(lote.env, next);
        const note: Note = {
          env: lote.env,
          cnpj: lote.cnpj,
          numero: String(next),
          idNota: createHash('sha256')
            .update(`${lote.env}|${lote.cnpj}|${rps.numero}|${rps.serie}`)
            .digest('hex')
            .slice(0, 32),
          rpsNumero: rps.numero,
          rpsSerie: rps.serie,
          protocolo: lote.protocolo,
          issuedAt: localDateTime(now),
          cancelled: false,
          motivo: null,
        };
        notes.push(note);
        store?.append(note);
        deps.logger.info(`sandbox EL legacy: NFS-e ${note.numero} issued for RPS ${rps.numero}`);
      }
      lote.settled = true;
      loteStore?.append(lote);
    }
  }

  function receiveLote(env: string, params: (name: string) => string): string {
    const cnpj = params('identificacaoPrestador');
    const session = sessions.get(params('hashIdentificador'));
    if (!session || session.env !== env || session.cnpj !== cnpj || session.expires < deps.now().getTime()) {
      throw new Refusal(['EL002 - Sessão inválida ou expirada - Autentique-se com autenticarContribuinte']);
    }
    const arquivo = params('arquivo').trim();
    const schema = validateXml('elLegacy', arquivo);
    if (!schema.ok) {
      throw new Refusal(schema.errors.slice(0, 5).map((e) => `EL003 - Arquivo em desacordo com o XML Schema - ${e}`));
    }
    const root = parseDom(arquivo).documentElement;
    if (textAt(root, 'IdentificacaoPrestador/CpfCnpj')?.trim() !== cnpj) {
      throw new Refusal(['E70 - Prestador do lote não confere com o prestador autenticado']);
    }
    const im = textAt(root, 'IdentificacaoPrestador/InscricaoMunicipal')?.trim();
    const registered = users?.[cnpj]?.inscricaoMunicipal;
    if (registered && im !== registered) {
      throw new Refusal([
        'E50 - Inscrição Municipal do prestador do serviço incorreta - Informe a inscrição cadastrada',
      ]);
    }
    const list = childElements(child(root, 'ListaRps')!).filter((e) => e.localName === 'Rps');
    if (Number(textAt(root, 'QuantidadeRps')) !== list.length) {
      throw new Refusal(['EL004 - QuantidadeRps não confere com a quantidade de RPS do lote']);
    }
    const rps = list.map((r) => {
      if (textAt(r, 'DadosPrestador/IdentificacaoPrestador/CpfCnpj')?.trim() !== cnpj) {
        throw new Refusal(['E70 - Prestador do RPS não confere com o prestador do lote']);
      }
      if (textAt(r, 'DadosPrestador/IdentificacaoPrestador/InscricaoMunicipal')?.trim() !== im) {
        throw new Refusal(['E70 - Inscrição Municipal do RPS não confere com a do lote']);
      }
      return {
        numero: textAt(r, 'IdentificacaoRps/Numero')?.trim() ?? '',
        serie: textAt(r, 'IdentificacaoRps/Serie')?.trim() ?? '',
      };
    });
    settle();
    const known = (n: { numero: string; serie: string }) =>
      notes.some((x) => x.env === env && x.cnpj === cnpj && x.rpsNumero === n.numero && x.rpsSerie === n.serie) ||
      [...lotes.values()].some(
        (l) => l.env === env && l.cnpj === cnpj && l.rps.some((y) => y.numero === n.numero && y.serie === n.serie),
      );
    const repeated = rps.find(known);
    if (repeated) throw new Refusal([`E10 - RPS já informado - RPS ${repeated.numero} série ${repeated.serie}`]);
    const protocolo = `${Date.now()}${randomBytes(3).toString('hex')}`;
    const numeroLote = textAt(root, 'NumeroLote')?.trim() ?? '';
    const lote: Lote = { env, cnpj, protocolo, numeroLote, receivedAt: deps.now().getTime(), rps, settled: false };
    lotes.set(protocolo, lote);
    loteStore?.append(lote);
    return (
      `<numeroLote>${numeroLote}</numeroLote><dataRecebimento>${localDateTime(deps.now())}</dataRecebimento>` +
      `<numeroProtocolo>${protocolo}</numeroProtocolo>`
    );
  }

  function loteOf(env: string, params: (name: string) => string): Lote {
    const lote = lotes.get(params('numeroProtocolo'));
    if (!lote || lote.env !== env || lote.cnpj !== params('identificacaoPrestador')) {
      throw new Refusal(['E86 - Número do protocolo de recebimento do lote inexistente na base de dados']);
    }
    return lote;
  }

  function handle(req: SandboxRequest): SandboxReply {
    const env = req.params.ambiente;
    let operation: Element | null;
    try {
      const root = parseDom(req.body.toString('utf8')).documentElement;
      if (root.localName !== 'Envelope' || root.namespaceURI !== SOAP_NS)
        return fault(500, 'Client', 'SOAP 1.1 envelope expected');
      operation = childElements(child(root, 'Body') ?? root)[0] ?? null;
    } catch (err) {
      return fault(500, 'Client', `XML mal formado: ${(err as Error).message}`);
    }
    if (!operation || operation.namespaceURI !== SERVICE_NS) {
      return fault(500, 'Client', `operação desconhecida no namespace ${operation?.namespaceURI ?? '(nenhum)'}`);
    }
    const op = operation;
    const params = (name: string) => {
      const found = childElements(op).find((e) => e.localName === name && !e.namespaceURI);
      return found?.textContent ?? '';
    };
    const name = op.localName;
    try {
      switch (name) {
        case 'autenticarContribuinte': {
          const cnpj = params('identificacaoPrestador').trim();
          if (!validUser(cnpj, params('senha'))) {
            return envelope(name, mensagens(['EL001 - Usuário ou senha inválidos']));
          }
          const hash = randomBytes(16).toString('hex');
          sessions.set(hash, { env, cnpj, expires: deps.now().getTime() + SESSION_MS });
          return envelope(name, hash);
        }
        case 'finalizarSessao':
          sessions.delete(params('hashIdentificador'));
          return envelope(name, 'true');
        case 'EnviarLoteRpsEnvio':
          return envelope(name, receiveLote(env, params));
        case 'ConsultarSituacaoLoteRpsEnvio': {
          settle();
          const lote = loteOf(env, params);
          return envelope(
            name,
            `<numeroLote>${lote.numeroLote}</numeroLote><situacaoLoteRps>${lote.settled ? 4 : 1}</situacaoLoteRps>`,
          );
        }
        case 'ConsultarLoteRpsEnvio': {
          settle();
          const lote = loteOf(env, params);
          if (!lote.settled) throw new Refusal(['E178 - Lote aguardando processamento']);
          const own = notes.filter((n) => n.env === env && n.protocolo === lote.protocolo);
          return envelope(name, `<notasFiscais>${own.map(noteXml).join('')}</notasFiscais>`);
        }
        case 'ConsultarNfseRpsEnvio': {
          settle();
          const cnpj = params('identificacaoPrestador').trim();
          const numero = params('identificacaoRps').trim();
          const found = notes.filter((n) => n.env === env && n.cnpj === cnpj && n.rpsNumero === numero);
          return envelope(name, found.map(noteXml).join(''));
        }
        case 'CancelarNfseMotivoEnvio': {
          const cnpj = params('identificacaoPrestador').trim();
          if (!validUser(cnpj, params('senha'))) {
            return envelope(name, mensagens(['EL001 - Usuário ou senha inválidos']));
          }
          const motivo = params('motivoCancelamento').trim();
          if (!motivo) throw new Refusal(['EL005 - Motivo do cancelamento não informado']);
          const note = notes.find((n) => n.env === env && n.cnpj === cnpj && n.numero === params('numeroNfse').trim());
          if (!note) throw new Refusal(['E212 - NFS-e não encontrada']);
          if (note.cancelled) throw new Refusal(['E79 - NFS-e já está cancelada']);
          note.cancelled = true;
          note.motivo = motivo;
          store?.append(note);
          deps.logger.info(`sandbox EL legacy: NFS-e ${note.numero} cancelled`);
          return envelope(name, noteXml(note));
        }
        default:
          return fault(500, 'Client', `operação ${name} não disponível no sandbox`);
      }
    } catch (err) {
      if (err instanceof Refusal) return envelope(name, mensagens(err.messages));
      throw err;
    }
  }

  return {
    family: 'own-layout',
    name: 'EL legacy',
    mount: '/municipal/own-layout-el/:ambiente(producao|producaorestrita)',
    routes: [{ method: 'POST', path: '/', name: 'el-rps-service', handler: handle }],
    notFound: () => fault(404, 'Client', 'serviço não encontrado'),
    errorReply: (_req, err) => fault(500, 'Server', err.message),
    faults: {
      errorReply: () => fault(503, 'Server', 'Serviço indisponível (falha simulada)'),
      isWrite: (req) => ['EnviarLoteRpsEnvio', 'CancelarNfseMotivoEnvio'].includes(operationOf(req) ?? ''),
    },
    admin: [
      registerSettingsRoute<NonNullable<typeof users>>({
        slug: 'own-layout-el',
        field: 'users',
        set: (given) => {
          users = given;
        },
        answer: 'names',
      }),
    ],
  };
}

export const elLegacySandbox: MunicipalSandbox = {
  engine: 'own-layout:el',
  slug: 'own-layout-el',
  create: (deps) => createElLegacyService(deps),
};
