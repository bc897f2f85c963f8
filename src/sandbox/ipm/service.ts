import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { authorizationOf } from '../kit/client-certificate.ts';
import { JsonlFile } from '../kit/jsonl.ts';
import { registerSettingsRoute } from '../kit/register-settings.ts';
import type { SandboxReply, SandboxRequest, SandboxService } from '../kit/server.ts';
import { childElements, escapeXml, parseDom, textAt } from '../kit/xml-dom.ts';
import type { MunicipalSandbox, MunicipalSandboxDependencies } from '../municipal.ts';
import { notFoundPage, renderNotePdf } from './danfse.ts';
import { formParts, htmlPage, isLegacyRequest, legacyForm } from './legacy.ts';

/**
 * IPM / Atende.Net own layout 1.01 (briefs/providers-own.md §2; IPM "Manual Integrador NFS-e – Eletron V2") below
 * `/municipal/ipm/{producao|producaorestrita}`: one URL, `POST` multipart/form-data with exactly one XML file part
 * (ISO-8859-1 declared), HTTP Basic `CPF/CNPJ:senha`; or the legacy 1.00 form (no Basic: `login`, `senha`, `cidade`
 * TOM, file `f1`, XML answer only with `?eletron=1` / `?formato_saida=2`: ./legacy.ts). The root of the XML selects
 * the operation:
 *
 *   <nfse> (emission)                 → <retorno> 00001 - Sucesso, numero_nfse, serie_nfse, data/hora, situação 1,
 *                                       link_nfse, cod_verificador_autenticidade; a repeated <identificador> answers
 *                                       the note already issued (the idempotency hook, §2.3)
 *   <nfse><nf><situacao>C</situacao>  → cancellation: <retorno> with situação 2; already cancelled → 00226
 *   <nfse><pesquisa>                  → the note by codigo_autenticidade
 *   <consulta_rps>                    → the note by cidade/serie_rps/numero_rps; unknown → "RPS não encontrado"
 *   GET ?codauten=<código>            → the public DANFSE link (no auth): a real PDF of the note (./danfse.ts)
 *
 * Refusals are `<retorno><mensagem><codigo>NNNNN - texto</codigo>…</mensagem></retorno>` (5-digit codes, manual §7
 * ranges: 131–139 user/login/permission, 2–6 prestador, 7–9 city, 11–14 tomador). Bad Basic credentials: HTTP 401
 * with 00131. The code numbers inside the ranges are this sandbox's (the manual's list was not transcribed); it
 * accepts only the readings the engine's definition states (src/engines/ipm/definition.ts header). Notes are kept in
 * `<dataDir>/ipm/notes.jsonl` (replayed at start). Valid users: any
 * CPF/CNPJ with a non-empty password until a list is set (`PUT /__sandbox/ipm/settings {"users": {"<cnpj>": "<senha>"}}`).
 */

interface Note {
  env: string;
  user: string;
  identificador: string;
  numero: string;
  serie: string;
  codigo: string;
  cidade: string;
  rpsSerie: string;
  rpsNumero: string;
  issuedAt: Date;
  cancelled: boolean;
}

const XML = { 'content-type': 'application/xml; charset=ISO-8859-1' };
const DECLARATION = '<?xml version="1.0" encoding="ISO-8859-1"?>';
const MONEY = /^\d{1,13},\d{2}$/;
const SITUACOES = new Set(['0', '00', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '14', '15']);

const retorno = (status: number, body: string): SandboxReply => ({
  status,
  body: `${DECLARATION}<retorno>${body}</retorno>`,
  headers: XML,
});
const refuse = (status: number, ...messages: string[]): SandboxReply =>
  retorno(status, `<mensagem>${messages.map((m) => `<codigo>${escapeXml(m)}</codigo>`).join('')}</mensagem>`);

/** The single file part of a multipart/form-data body, or why there is none. */
export function filePart(req: SandboxRequest): { ok: true; xml: string } | { ok: false; reason: string } {
  const type = String(req.headers['content-type'] ?? '');
  const boundary = /^multipart\/form-data;.*boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!boundary) return { ok: false, reason: 'envie multipart/form-data' };
  const text = req.body.toString('latin1');
  const parts = text.split(`--${boundary}`).slice(1, -1);
  const files = parts.filter((p) => /filename="[^"]+"/i.test(p.slice(0, p.indexOf('\r\n\r\n'))));
  if (files.length !== 1) return { ok: false, reason: 'envie exatamente um arquivo XML' };
  const part = files[0];
  const headerEnd = part.indexOf('\r\n\r\n');
  if (!/content-type:\s*text\/xml/i.test(part.slice(0, headerEnd)))
    return { ok: false, reason: 'arquivo não é text/xml' };
  return { ok: true, xml: part.slice(headerEnd + 4).replace(/\r\n$/, '') };
}

function noteXml(note: Note, message = '00001 - Sucesso'): string {
  const local = new Date(note.issuedAt.getTime() - 3 * 3600_000).toISOString();
  return (
    `<mensagem><codigo>${message}</codigo></mensagem><numero_nfse>${note.numero}</numero_nfse>` +
    `<serie_nfse>${note.serie}</serie_nfse>` +
    `<data_nfse>${local.slice(8, 10)}/${local.slice(5, 7)}/${local.slice(0, 4)}</data_nfse>` +
    `<hora_nfse>${local.slice(11, 19)}</hora_nfse>` +
    `<situacao_codigo_nfse>${note.cancelled ? 2 : 1}</situacao_codigo_nfse>` +
    `<situacao_descricao_nfse>${note.cancelled ? 'Cancelada' : 'Emitida'}</situacao_descricao_nfse>` +
    `<link_nfse>http://sync.nfs-e.net/datacenter/include/nfw/nfw_imp_notas.php?codauten=${note.codigo}</link_nfse>` +
    `<cod_verificador_autenticidade>${note.codigo}</cod_verificador_autenticidade>`
  );
}

/** The emission's layout rules (manual §6.1 as the brief summarises it): the first broken one, or null. */
function layoutError(root: Element, user: string): string | null {
  const t = (path: string) => textAt(root, path)?.trim() ?? '';
  const id = t('identificador');
  if (!id || id.length > 80) return '00150 - Identificador ausente ou maior que 80 caracteres';
  if (!t('rps/nro_recibo_provisorio') || !/^\d{2}\/\d{2}\/\d{4}$/.test(t('rps/data_emissao_recibo_provisorio'))) {
    return '00151 - RPS incompleto (número e data dd/mm/aaaa)';
  }
  for (const name of ['valor_total', 'valor_desconto', 'valor_ir', 'valor_inss', 'valor_contribuicao_social']) {
    if (!MONEY.test(t(`nf/${name}`))) return `00010 - nf/${name} deve usar vírgula decimal (0,00)`;
  }
  if (t('prestador/cpfcnpj') !== user) return '00133 - Usuário sem permissão para emitir pelo prestador informado';
  if (!/^\d{4}$/.test(t('prestador/cidade'))) return '00007 - Cidade do prestador deve ser o código TOM';
  const tipo = t('tomador/tipo');
  if (!['F', 'J'].includes(tipo)) return '00011 - Tipo do tomador inválido';
  if (!/^(\d{11}|\d{14})$/.test(t('tomador/cpfcnpj'))) return '00012 - CPF/CNPJ do tomador inválido';
  if (!t('tomador/nome_razao_social')) return '00013 - Nome do tomador não informado';
  const informed = t('tomador/endereco_informado');
  if (!['S', 'N'].includes(informed)) return '00014 - endereco_informado deve ser S ou N';
  if (informed === 'S' && !/^\d{4}$/.test(t('tomador/cidade')))
    return '00008 - Cidade do tomador deve ser o código TOM';
  const lista = root.getElementsByTagName('lista');
  if (lista.length !== 1) return '00020 - Informe um item de serviço';
  const item = (name: string) => textAt(lista[0], name)?.trim() ?? '';
  if (!['S', 'N'].includes(item('tributa_municipio_prestador'))) return '00021 - tributa_municipio_prestador S ou N';
  if (!/^\d{4}$/.test(item('codigo_local_prestacao_servico'))) return '00009 - Local da prestação deve ser TOM';
  if (!/^\d{3,4}$/.test(item('codigo_item_lista_servico'))) return '00022 - Item da lista de serviço inválido';
  if (!item('descritivo')) return '00023 - Descritivo do serviço não informado';
  if (!SITUACOES.has(item('situacao_tributaria'))) return '00024 - Situação tributária inválida';
  for (const name of ['aliquota_item_lista_servico', 'valor_tributavel', 'valor_deducao', 'valor_issrf']) {
    if (!MONEY.test(item(name))) return `00025 - ${name} deve usar vírgula decimal (0,00)`;
  }
  return null;
}

export function createIpmService(deps: MunicipalSandboxDependencies): SandboxService {
  const notes: Note[] = [];
  let users: Record<string, string> | null = null;
  const numbers = new Map<string, number>();
  // what it issued and cancelled survives a restart: one line per note state, the last one wins
  const store = deps.dataDir ? new JsonlFile<Note>(join(deps.dataDir, 'ipm', 'notes.jsonl')) : null;
  store?.replay(
    (line) => {
      const note = { ...line, issuedAt: new Date(line.issuedAt) };
      const index = notes.findIndex((n) => n.env === note.env && n.numero === note.numero);
      if (index >= 0) notes[index] = note;
      else notes.push(note);
      numbers.set(note.env, Math.max(numbers.get(note.env) ?? 0, Number(note.numero)));
    },
    (m) => deps.logger.warn(m),
  );

  /** 1.01 (Basic + one file part) or the legacy 1.00 form (./legacy.ts): the user and the XML, then `process`. */
  function handle(req: SandboxRequest): SandboxReply {
    const form = formParts(req);
    if (form.ok && isLegacyRequest(req, form.parts)) {
      const legacy = legacyForm(req, form.parts);
      if (!legacy.ok) return refuse(legacy.status, legacy.message);
      if (users && users[legacy.user] !== legacy.password) return refuse(401, '00132 - Usuário ou senha inválidos');
      const reply = process(req.params.ambiente, legacy.user, legacy.xml, legacy.cidade);
      // without `?eletron=1` / `?formato_saida=2` the legacy server answers a page, not XML
      return legacy.xmlAnswer ? reply : htmlPage(String(reply.body).replace(/<[^>]+>/g, ' '));
    }
    const auth = authorizationOf(req.headers);
    if (auth?.scheme !== 'basic' || !/^(\d{11}|\d{14})$/.test(auth.user) || !auth.password) {
      return refuse(401, '00131 - Usuário ou senha inválidos (Basic CPF/CNPJ:senha)');
    }
    if (users && users[auth.user] !== auth.password) return refuse(401, '00132 - Usuário ou senha inválidos');
    const file = filePart(req);
    if (!file.ok) return refuse(400, `00900 - ${file.reason}`);
    return process(req.params.ambiente, auth.user, file.xml, null);
  }

  /** One message of a user: `legacyCidade` is the 1.00 form's `cidade` field (the prestador's TOM must match it). */
  function process(env: string, user: string, xml: string, legacyCidade: string | null): SandboxReply {
    if (!/^<\?xml[^>]*encoding="ISO-8859-1"/i.test(xml)) return refuse(200, '00901 - Declare ISO-8859-1');
    let root: Element;
    try {
      root = parseDom(xml).documentElement;
    } catch (err) {
      return refuse(200, `00902 - XML mal formado: ${(err as Error).message}`);
    }
    const mine = notes.filter((n) => n.env === env && n.user === user);
    if (root.localName === 'consulta_rps') {
      const t = (name: string) => textAt(root, name)?.trim() ?? '';
      const note = mine.find(
        (n) => n.cidade === t('cidade') && n.rpsSerie === t('serie_rps') && n.rpsNumero === t('numero_rps'),
      );
      return note ? retorno(200, noteXml(note)) : refuse(200, '00224 - RPS não encontrado');
    }
    if (root.localName !== 'nfse') return refuse(200, '00903 - Raiz do XML desconhecida');
    const names = childElements(root).map((e) => e.localName);
    if (names.includes('pesquisa')) {
      const note = mine.find((n) => n.codigo === textAt(root, 'pesquisa/codigo_autenticidade')?.trim());
      return note ? retorno(200, noteXml(note)) : refuse(200, '00225 - NFS-e não encontrada');
    }
    if (textAt(root, 'nf/situacao')?.trim() === 'C') {
      if (textAt(root, 'prestador/cpfcnpj')?.trim() !== user) return refuse(200, '00133 - Usuário sem permissão');
      const note = mine.find((n) => n.numero === textAt(root, 'nf/numero')?.trim());
      if (!note) return refuse(200, '00225 - NFS-e não encontrada');
      if (note.cancelled) return refuse(200, '00226 - NFS-e já cancelada');
      if (!textAt(root, 'nf/observacao')?.trim()) return refuse(200, '00227 - Motivo (observacao) obrigatório');
      note.cancelled = true;
      store?.append(note);
      deps.logger.info(`sandbox IPM: NFS-e ${note.numero} cancelled`);
      return retorno(200, noteXml(note));
    }
    const error = layoutError(root, user);
    if (error) return refuse(200, error);
    if (legacyCidade !== null && textAt(root, 'prestador/cidade')?.trim() !== legacyCidade) {
      return refuse(200, '00007 - Cidade do prestador difere do campo cidade do formulário');
    }
    const identificador = textAt(root, 'identificador')?.trim() ?? '';
    const again = mine.find((n) => n.identificador === identificador);
    if (again) return retorno(200, noteXml(again));
    const next = (numbers.get(env) ?? 0) + 1;
    numbers.set(env, next);
    const note: Note = {
      env,
      user,
      identificador,
      numero: String(next),
      serie: '1',
      codigo: BigInt(`0x${createHash('sha256').update(`${env}|${user}|${identificador}`).digest('hex').slice(0, 14)}`)
        .toString()
        .padStart(17, '0')
        .slice(-14),
      cidade: textAt(root, 'prestador/cidade')?.trim() ?? '',
      rpsSerie: textAt(root, 'rps/serie_recibo_provisorio')?.trim() ?? '',
      rpsNumero: textAt(root, 'rps/nro_recibo_provisorio')?.trim() ?? '',
      issuedAt: deps.now(),
      cancelled: false,
    };
    notes.push(note);
    store?.append(note);
    deps.logger.info(`sandbox IPM: NFS-e ${note.numero} issued for ${identificador}`);
    return retorno(200, noteXml(note));
  }

  /** The public DANFSE link (`?codauten=`): no authentication, a real PDF of the note (./danfse.ts). */
  async function danfse(req: SandboxRequest): Promise<SandboxReply> {
    const code = req.query.get('codauten')?.trim() ?? '';
    const note = notes.find((n) => n.env === req.params.ambiente && n.codigo === code);
    if (!note) return notFoundPage(code);
    return { status: 200, body: await renderNotePdf(note), headers: { 'content-type': 'application/pdf' } };
  }

  return {
    family: 'ipm',
    name: 'IPM',
    mount: '/municipal/ipm/:ambiente(producao|producaorestrita)',
    routes: [
      { method: 'POST', path: '/', name: 'ipm', handler: handle },
      { method: 'GET', path: '/', name: 'ipm-danfse', handler: danfse },
    ],
    notFound: () => refuse(404, '00904 - Serviço não encontrado'),
    errorReply: (_req, err) => refuse(500, `00999 - ${err.message}`),
    faults: { errorReply: () => refuse(503, '00998 - Serviço indisponível') },
    admin: [
      registerSettingsRoute<NonNullable<typeof users>>({
        slug: 'ipm',
        field: 'users',
        set: (given) => {
          users = given;
        },
        answer: 'names',
      }),
    ],
  };
}

export const ipmSandbox: MunicipalSandbox = { engine: 'ipm:ipm', slug: 'ipm', create: createIpmService };
