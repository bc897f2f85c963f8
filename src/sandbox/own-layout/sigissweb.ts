import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { JsonlFile } from '../kit/jsonl.ts';
import { registerSettingsRoute } from '../kit/register-settings.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { childElements, parseDom } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';

/**
 * SigISSWeb below `/municipal/own-layout-sigissweb/{producao|producaorestrita}`, the `rest/` API of the city hosts
 * (`https://ws<city>.sigissweb.com/rest/…`) as ACBr `SigISSWeb.Provider.pas`, OpenAC `ProviderSigISSWeb.cs`, UniNFe
 * `SIGISSWEB` and the vendor's sample client use it:
 *
 *   POST /rest/login  {"login", "senha"} → 200 text/plain `Bearer <token>`; refused → 401 <erros><erro>…
 *   POST /rest/nfes   (Authorization: <token>) <notafiscal>…</notafiscal> → 200 <notafiscal>{the note as received,
 *                     codigo, numero_nf, serie, data_emissao}</notafiscal>
 *   GET  /rest/nfes/pegaxml/{rps}/serierps/{serie}            → 200 <notafiscal> | 404 <erros> "RPS não encontrado"
 *   GET  /rest/nfes/pegaxmlpelonumeronf/{numero}/serienf/{serie} → 200 <notafiscal> | 404
 *
 * No public XSD exists: each note is checked against the documented structure (the element names and order the
 * public clients agree on, their formats: dd/mm/aaaa, decimal comma, S|N). Refusals are `<erros><erro>{codigo,
 * descricao}</erro></erros>` (the shape ACBr reads; the codes are not published, these are the sandbox's): 01 login
 * or token, 11 layout, 10 the note's provider is not the logged-in one, 20 "RPS … ja foi importado anteriormente" (the
 * text the PHP production client looks for), 40 not found. Users: any CNPJ with any password until a list is set
 * (`PUT /__sandbox/own-layout-sigissweb/settings {"users": {"<cnpj>": "<senha>"}}`). Notes are kept in
 * `<dataDir>/own-layout-sigissweb/notes.jsonl`.
 */

interface Note {
  env: string;
  login: string;
  numero: string;
  serie: string;
  rps: string;
  serieRps: string;
  codigo: string;
  issuedAt: string;
  /** the <notafiscal> children as received, in order */
  fields: [string, string][];
}

const XML_HEADERS = { 'content-type': 'application/xml; charset=ISO-8859-1' };

const asciiXml = (value: string) =>
  value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/[^\x20-\x7e]/g, (c) => `&#${c.codePointAt(0)};`);

function refuse(status: number, codigo: string, descricao: string): SandboxReply {
  return {
    status,
    headers: XML_HEADERS,
    body:
      '<?xml version="1.0" encoding="ISO-8859-1"?><erros><erro>' +
      `<codigo>${codigo}</codigo><descricao>${asciiXml(descricao)}</descricao></erro></erros>`,
  };
}

const MONEY = /^\d{1,12}(,\d{1,2})?$/;
const DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;

/** The documented <notafiscal>: element, required, format. Order as ACBr's writer and the PHP client send it. */
const LAYOUT: [string, boolean, RegExp][] = [
  ['cnpj_cpf_prestador', true, /^(\d{11}|\d{14})$/],
  ['exterior_dest', true, /^[01]$/],
  ['cnpj_cpf_destinatario', true, /^(\d{11}|\d{14})$/],
  ['pessoa_destinatario', true, /^[FJ]$/],
  ['ie_destinatario', false, /^.{0,16}$/],
  ['im_destinatario', false, /^.{0,16}$/],
  ['razao_social_destinatario', true, /^.{1,100}$/],
  ['endereco_destinatario', true, /^.{1,60}$/],
  ['numero_ende_destinatario', false, /^.{0,10}$/],
  ['complemento_ende_destinatario', false, /^.{0,60}$/],
  ['bairro_destinatario', false, /^.{0,60}$/],
  ['cep_destinatario', true, /^\d{8}$/],
  ['cidade_destinatario', true, /^.{1,60}$/],
  ['uf_destinatario', true, /^[A-Z]{2}$/],
  ['pais_destinatario', true, /^.{1,60}$/],
  ['fone_destinatario', false, /^.{0,30}$/],
  ['email_destinatario', false, /^.{0,120}$/],
  ['valor_nf', true, MONEY],
  ['deducao', true, MONEY],
  ['valor_servico', true, MONEY],
  ['data_emissao', true, DATE],
  ['forma_de_pagamento', false, /^.{0,100}$/],
  ['descricao', true, /^[\s\S]{1,1000}$/],
  ['id_codigo_servico', true, /^\d{2}\.\d{2}(\.\d{2})?$/],
  ['cancelada', true, /^N$/],
  ['iss_retido', true, /^[SNFDI]$/],
  ['aliq_iss', true, MONEY],
  ['valor_iss', true, MONEY],
  ...['pis', 'cofins', 'csll', 'irrf', 'inss'].flatMap((tax): [string, boolean, RegExp][] => [
    [`bc_${tax}`, true, MONEY],
    [`aliq_${tax}`, true, MONEY],
    [`valor_${tax}`, true, MONEY],
  ]),
  ['sistema_gerador', true, /^.{1,60}$/],
  ['serie_rps', true, /^[A-Za-z0-9]{1,10}$/],
  ['rps', true, /^\d{1,10}$/],
  ['codigo_nbs', false, /^(\d\.\d{4}\.\d{2}\.\d{2})?$/],
  ['exterior_prestacao_servico', true, /^0$/],
  ['pais_local_prest', true, /^.{1,60}$/],
  ['cidade_local_prest', true, /^.{1,60}$/],
  ['uf_local_prest', true, /^[A-Z]{2}$/],
];

const amount = (value: string) => Number(value.replace(',', '.'));

/** The note's fields in order, or the first broken rule. */
function readNote(xml: string): { fields: [string, string][] } | { error: string } {
  let root: Element;
  try {
    root = parseDom(xml).documentElement as Element;
  } catch (err) {
    return { error: `XML mal formado: ${(err as Error).message}` };
  }
  if (root?.localName !== 'notafiscal' || root.namespaceURI) return { error: 'a raiz deve ser <notafiscal>' };
  const fields = childElements(root).map((e): [string, string] => [e.localName ?? '', e.textContent ?? '']);
  const names = fields.map(([name]) => name);
  const expected = LAYOUT.map(([name]) => name).filter((name) => names.includes(name));
  if (names.length !== expected.length || names.some((name, i) => name !== expected[i])) {
    const odd = names.find((name, i) => name !== expected[i]) ?? '';
    return { error: `elemento inesperado ou fora de ordem: ${odd}` };
  }
  const value = new Map(fields);
  for (const [name, required, format] of LAYOUT) {
    const v = value.get(name);
    if (v === undefined) {
      if (required) return { error: `campo obrigatório ausente: ${name}` };
      continue;
    }
    if ((required && !v.trim()) || !format.test(v)) return { error: `campo inválido: ${name}` };
  }
  const date = DATE.exec(value.get('data_emissao') ?? '');
  if (!date || Number.isNaN(new Date(`${date[3]}-${date[2]}-${date[1]}T12:00:00Z`).getTime())) {
    return { error: 'campo inválido: data_emissao' };
  }
  const pessoa = value.get('pessoa_destinatario');
  if ((value.get('cnpj_cpf_destinatario') ?? '').length !== (pessoa === 'F' ? 11 : 14)) {
    return { error: 'cnpj_cpf_destinatario não corresponde a pessoa_destinatario' };
  }
  const expectedIss = (amount(value.get('valor_servico') ?? '0') * amount(value.get('aliq_iss') ?? '0')) / 100;
  if (Math.abs(Math.round(expectedIss * 100) / 100 - amount(value.get('valor_iss') ?? '0')) > 0.01) {
    return { error: 'valor_iss difere de valor_servico x aliq_iss' };
  }
  return { fields };
}

export function createSigIssWebService(deps: MunicipalSandboxDependencies): SandboxService {
  const notes: Note[] = [];
  const numbers = new Map<string, number>();
  const tokens = new Map<string, { env: string; login: string }>();
  let users: Record<string, string> | null = null;
  const store = deps.dataDir ? new JsonlFile<Note>(join(deps.dataDir, 'own-layout-sigissweb', 'notes.jsonl')) : null;
  store?.replay(
    (line) => {
      notes.push(line);
      numbers.set(line.env, Math.max(numbers.get(line.env) ?? 0, Number(line.numero)));
    },
    (m) => deps.logger.warn(m),
  );

  const brasilia = () => new Date(deps.now().getTime() - 3 * 3600_000).toISOString();

  function loginRoute(req: SandboxRequest): SandboxReply {
    const body = req.json();
    const login = String(body?.login ?? '');
    const senha = String(body?.senha ?? '');
    const known = users ? users[login] === senha : /^(\d{11}|\d{14})$/.test(login) && senha.length > 0;
    if (!known || !senha) return refuse(401, '01', 'Login ou senha inválidos');
    const token = `Bearer ${randomBytes(24).toString('hex')}`;
    tokens.set(token, { env: req.params.ambiente ?? '', login });
    return { status: 200, headers: { 'content-type': 'text/plain; charset=ISO-8859-1' }, body: token };
  }

  /** The session of the request's token, or the refusal. */
  function session(req: SandboxRequest): { env: string; login: string } | SandboxReply {
    const found = tokens.get(String(req.headers.authorization ?? '').trim());
    if (!found || found.env !== req.params.ambiente) return refuse(401, '01', 'Token de acesso inválido ou expirado');
    return found;
  }

  function view(note: Note): SandboxReply {
    const known = new Set(['codigo', 'numero_nf', 'serie', 'data_emissao', 'cancelada']);
    const fields = note.fields.filter(([name]) => !known.has(name));
    const body =
      `<codigo>${note.codigo}</codigo><numero_nf>${note.numero}</numero_nf><serie>${note.serie}</serie>` +
      `<data_emissao>${note.issuedAt}</data_emissao><cancelada>N</cancelada>` +
      fields.map(([name, value]) => `<${name}>${asciiXml(value)}</${name}>`).join('');
    return {
      status: 200,
      headers: XML_HEADERS,
      body: `<?xml version="1.0" encoding="ISO-8859-1"?><notafiscal>${body}</notafiscal>`,
    };
  }

  function nfes(req: SandboxRequest): SandboxReply {
    const who = session(req);
    if ('status' in who) return who;
    const type = String(req.headers['content-type'] ?? '');
    if (!/^(application|text)\/xml\b/i.test(type)) return refuse(415, '11', 'Content-Type deve ser application/xml');
    const read = readNote(req.body.toString('latin1'));
    if ('error' in read) return refuse(400, '11', read.error);
    const value = new Map(read.fields);
    if (value.get('cnpj_cpf_prestador') !== who.login) {
      return refuse(400, '10', 'O prestador da nota não é o contribuinte autenticado');
    }
    const rps = value.get('rps') ?? '';
    const serieRps = value.get('serie_rps') ?? '';
    const mine = (n: Note) => n.env === who.env && n.login === who.login;
    if (notes.some((n) => mine(n) && n.rps === rps && n.serieRps === serieRps)) {
      return refuse(400, '20', `O RPS ${rps} serie ${serieRps} ja foi importado anteriormente`);
    }
    const next = (numbers.get(who.env) ?? 0) + 1;
    numbers.set(who.env, next);
    const now = brasilia();
    const note: Note = {
      env: who.env,
      login: who.login,
      numero: String(next),
      serie: 'E',
      rps,
      serieRps,
      codigo: createHash('sha256')
        .update(`${who.env}|${who.login}|${rps}|${serieRps}`)
        .digest('hex')
        .slice(0, 10)
        .toUpperCase(),
      issuedAt: `${now.slice(8, 10)}/${now.slice(5, 7)}/${now.slice(0, 4)}`,
      fields: read.fields,
    };
    notes.push(note);
    store?.append(note);
    deps.logger.info(`sandbox SigISSWeb: NFS-e ${note.numero} issued for RPS ${rps}`);
    return view(note);
  }

  function byRps(req: SandboxRequest): SandboxReply {
    const who = session(req);
    if ('status' in who) return who;
    const { rps, serie } = req.params;
    const note = notes.find((n) => n.env === who.env && n.login === who.login && n.rps === rps && n.serieRps === serie);
    return note ? view(note) : refuse(404, '40', 'RPS não encontrado');
  }

  function byNumber(req: SandboxRequest): SandboxReply {
    const who = session(req);
    if ('status' in who) return who;
    const { numero, serie } = req.params;
    const note = notes.find(
      (n) => n.env === who.env && n.login === who.login && n.numero === numero && n.serie === serie,
    );
    return note ? view(note) : refuse(404, '40', 'Nota fiscal não encontrada');
  }

  return {
    family: 'own-layout',
    name: 'SigISSWeb',
    mount: '/municipal/own-layout-sigissweb/:ambiente(producao|producaorestrita)',
    routes: [
      { method: 'POST', path: '/rest/login', name: 'login', handler: loginRoute },
      { method: 'POST', path: '/rest/nfes', name: 'nfes', handler: nfes },
      { method: 'GET', path: '/rest/nfes/pegaxml/:rps/serierps/:serie', name: 'pegaxml', handler: byRps },
      {
        method: 'GET',
        path: '/rest/nfes/pegaxmlpelonumeronf/:numero/serienf/:serie',
        name: 'pegaxmlpelonumeronf',
        handler: byNumber,
      },
    ],
    notFound: () => refuse(404, '404', 'Recurso não encontrado'),
    errorReply: (_req, err) => refuse(500, '500', err.message),
    faults: {
      errorReply: () => ({
        status: 503,
        headers: { 'content-type': 'text/plain' },
        body: 'Servico temporariamente indisponivel',
      }),
      isWrite: (req) => req.routeName === 'nfes',
    },
    admin: [
      registerSettingsRoute<NonNullable<typeof users>>({
        slug: 'own-layout-sigissweb',
        field: 'users',
        set: (given) => {
          users = given;
        },
        answer: 'names',
      }),
    ],
  };
}

export const sigIssWebSandbox: MunicipalSandbox = {
  engine: 'own-layout:sigissweb',
  slug: 'own-layout-sigissweb',
  create: createSigIssWebService,
};
