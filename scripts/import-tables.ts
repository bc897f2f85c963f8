/**
 * Regenerates the compact data tables in `src/domain/tables/*.json` from the official tables (exported as CSV)
 * and the national-emitter adhesion list.
 *
 *   npm run import-tables -- [--tables <dir with the derived CSVs>] [--routing <dir with emissor_nacional.json>]
 *
 * Defaults: `/work/shared/reference/tables/derived` and `/work/shared/reference/routing` (or the environment
 * variables NFSE_TABLES_DIR / NFSE_ROUTING_DIR). Every output records its sources (file, version, sha256) and
 * `generatedAt`. Rows the official files get wrong are dropped and counted in `dropped`, never silently fixed.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface SourceRef {
  file: string;
  version: string;
  sha256: string;
}

function argValue(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const tablesDir =
  argValue('--tables') ??
  process.env.NFSE_TABLES_DIR ??
  new URL('../../shared/reference/tables/derived', import.meta.url).pathname;
const routingDir =
  argValue('--routing') ??
  process.env.NFSE_ROUTING_DIR ??
  new URL('../../shared/reference/routing', import.meta.url).pathname;
const outDir = fileURLToPath(new URL('../src/domain/tables/', import.meta.url));
const generatedAt = new Date().toISOString();

/** RFC 4180 CSV: quoted fields may hold commas, quotes ("") and line breaks. */
function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (quoted) {
      if (c === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && src[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  const [header, ...body] = rows.filter((r) => r.length > 1 || r[0] !== '');
  return body.map((r) => Object.fromEntries(header.map((h, i) => [h.trim(), (r[i] ?? '').trim()])));
}

function load(dir: string, file: string, version: string): { rows: Record<string, string>[]; source: SourceRef } {
  const path = join(dir, file);
  const raw = readFileSync(path);
  const sha256 = createHash('sha256').update(raw).digest('hex');
  return { rows: parseCsv(raw.toString('utf8')), source: { file: basename(path), version, sha256 } };
}

const written: string[] = [];

function write(name: string, content: Record<string, unknown>): void {
  const path = join(outDir, name);
  writeFileSync(path, `${JSON.stringify(content)}\n`);
  written.push(path);
}

// --- countries (Anexo A) -------------------------------------------------------------------------------------
const countries = load(tablesDir, 'paises_iso2_anexo_a.csv', 'Anexo A v1.00 (2025-12-10), sheet PAISES_ISO2');
const countryMap: Record<string, string> = {};
for (const r of countries.rows) {
  const code = r['PAÍS ISO 2'];
  if (/^[A-Z]{2}$/.test(code)) countryMap[code] = r['NOME PAÍS'];
}
write('countries.json', { source: [countries.source], generatedAt, countries: countryMap });

// --- national service list (Anexo B) + ISS incidence (Anexo I) ------------------------------------------------
const list = load(tablesDir, 'lista_servico_nacional_cTribNac.csv', 'Anexo B v1.01 (2026-01-22), LISTA.SERV.NAC');
const items: Record<string, string> = {};
const subitems: Record<string, string> = {};
const codes: Record<string, string> = {};
for (const r of list.rows) {
  if (r.nivel === 'item') items[r.item] = r.descricao;
  else if (r.nivel === 'subitem') subitems[`${r.item}.${r.subitem}`] = r.descricao;
  else if (r.nivel === 'desdobro' && /^\d{6}$/.test(r.cTribNac)) codes[r.cTribNac] = r.descricao;
}
write('service-list.json', { source: [list.source], generatedAt, items, subitems, codes });

const incidence = load(
  tablesDir,
  'incidencia_issqn_por_cTribNac_anexo_i.csv',
  'Anexo I v1.00 (2025-12-16), MUN.INCID_INFO.SERV.',
);
/** cTribNac → [place of incidence ('EP' provider, 'LP' place of service, 'ET' taker, '' none), required group]. */
const incidenceMap: Record<string, [string, string]> = {};
for (const r of incidence.rows) {
  if (!/^\d{6}$/.test(r.cTribNac)) continue;
  let place = r.local_incidencia_resumo;
  // 200101 (port services) is marked "(**) X" in the LP column without a summary.
  if (!place && r.LP_local_prestacao.includes('X')) place = 'LP';
  const group = r.grupos_obrigatorios === '-' ? '' : r.grupos_obrigatorios;
  incidenceMap[r.cTribNac] = [place, group];
}
/**
 * Codes of the national list (Anexo B v1.01) that the incidence sheet of Anexo I v1.00 does not have, with the place
 * the law gives them (checked code by code against the annex and LC 116/2003, see ARCHITECTURE.md "ISS incidence"):
 * - 200102 (port services in marine waters) is the sibling of 200101: item 20 is due where the port is (art. 3 XXI),
 *   and art. 3 §3 keeps 20.01 at the place of service even in marine waters;
 * - 141403 / 141404 (crane services in building work) follow their siblings 141401 / 141402 and the general rule
 *   (art. 3 caput: the provider's establishment).
 */
const INCIDENCE_SUPPLEMENT: Record<string, [string, string]> = {
  '141403': ['EP', ''],
  '141404': ['EP', ''],
  '200102': ['LP', ''],
};
for (const [code, value] of Object.entries(INCIDENCE_SUPPLEMENT)) incidenceMap[code] ??= value;
write('iss-incidence.json', { source: [incidence.source], generatedAt, incidence: incidenceMap });

// --- cIndOp (Anexo C) ------------------------------------------------------------------------------------------
const indOp = load(tablesDir, 'cIndOp_anexo_c_v1-01.csv', 'Anexo C v1.01 (2026-01-22)');
const indOpMap: Record<string, [string, string]> = {};
for (const r of indOp.rows) {
  if (/^\d{6}$/.test(r.cIndOp)) indOpMap[r.cIndOp] = [r.tipo_operacao, r.local_fornecimento_dfe];
}
write('cindop.json', { source: [indOp.source], generatedAt, cIndOp: indOpMap });

// --- CST and cClassTrib (tables of 2025-12-12), only the codes valid for NFS-e ------------------------------------
const cst = load(tablesDir, 'CST_IBSCBS_2025-12-12.csv', 'CST IBS/CBS table 2025-12-12');
const classTrib = load(tablesDir, 'cClassTrib_2025-12-12.csv', 'cClassTrib table 2025-12-12 (indNFSe = 1)');
const cstMap: Record<string, string> = {};
for (const r of cst.rows) if (/^\d{3}$/.test(r['CST-IBS/CBS'])) cstMap[r['CST-IBS/CBS']] = r['Descrição CST-IBS/CBS'];
/** cClassTrib → [CST, name]. */
const classTribMap: Record<string, [string, string]> = {};
for (const r of classTrib.rows) {
  if (r.indNFSe !== '1' || !/^\d{6}$/.test(r.cClassTrib)) continue;
  classTribMap[r.cClassTrib] = [r['CST-IBS/CBS'], r['Nome cClassTrib']];
}
write('cclasstrib.json', {
  source: [cst.source, classTrib.source],
  generatedAt,
  cst: cstMap,
  cClassTrib: classTribMap,
});

// --- NBS 2.0 (Anexo B), 9-digit codes only ----------------------------------------------------------------------
const nbs = load(tablesDir, 'nbs_v2.csv', 'Anexo B v1.01 (2026-01-22), LISTA.NBS_v2.0');
const nbsCodes = nbs.rows.map((r) => r.codigo_nbs_digitos).filter((c) => /^\d{9}$/.test(c));
// Long code lists are stored as one space-separated string: compact, and stable under the formatter.
write('nbs.json', { source: [nbs.source], generatedAt, codes: nbsCodes.sort().join(' ') });

// --- Anexo VIII: LC 116 item × NBS × cIndOp × cClassTrib ----------------------------------------------------------
const annex = load(
  tablesDir,
  'correlacao_item_nbs_cIndOp_cClassTrib_anexo_viii_v1-00-00.csv',
  'Anexo VIII v1.00.00 (correlação item LC 116 × NBS × cIndOp × cClassTrib)',
);
const itemByDescription = new Map<string, string>();
for (const r of annex.rows) if (r.item_lc116) itemByDescription.set(r.descricao_item, r.item_lc116);
const nbsSet = new Set(nbsCodes);
const dropped: Record<string, number> = {};
function drop(reason: string): void {
  dropped[reason] = (dropped[reason] ?? 0) + 1;
}
/** item 'II.SS' → list of [nbs, cIndOp, cClassTrib], unique and sorted. */
const framings: Record<string, [string, string, string][]> = {};
for (const r of annex.rows) {
  // Merged cells lost the item on a few rows: recover it from the item description (same text, same item).
  const item = r.item_lc116 || itemByDescription.get(r.descricao_item) || '';
  // The spreadsheet stores some cIndOp as numbers, losing the leading zero (20201 → 020201).
  const op = /^\d{1,6}$/.test(r.cIndOp) ? r.cIndOp.padStart(6, '0') : '';
  const code = r.nbs_digitos;
  if (!/^\d{2}\.\d{2}$/.test(item)) drop('no LC 116 item');
  else if (!/^\d{9}$/.test(code)) drop('no NBS');
  else if (!/^\d{6}$/.test(r.cClassTrib)) drop('no cClassTrib');
  else if (!indOpMap[op]) drop(`cIndOp ${r.cIndOp} not in Anexo C`);
  else if (!classTribMap[r.cClassTrib]) drop(`cClassTrib ${r.cClassTrib} not valid for NFS-e`);
  else {
    if (!nbsSet.has(code)) drop(`NBS ${code} not in NBS 2.0 (kept)`);
    const list = framings[item] ?? [];
    if (!list.some(([n, o, c]) => n === code && o === op && c === r.cClassTrib)) list.push([code, op, r.cClassTrib]);
    framings[item] = list;
  }
}
for (const list of Object.values(framings)) list.sort((a, b) => a.join().localeCompare(b.join()));
write('anexo-viii.json', { source: [annex.source], generatedAt, dropped, framings });

// --- national-emitter adhesion list --------------------------------------------------------------------------------
const adhesionPath = join(routingDir, 'emissor_nacional.json');
const adhesionRaw = readFileSync(adhesionPath);
const adhesion = JSON.parse(adhesionRaw.toString('utf8')) as {
  fonte: string;
  atualizado_em: string;
  codigos: string[];
};
write('emissor-nacional.json', {
  source: [
    {
      file: basename(adhesionPath),
      version: `${adhesion.fonte} (municipios-aderentes, ${adhesion.atualizado_em}): Conveniado Ativo + AderenteEmissorNacional`,
      sha256: createHash('sha256').update(adhesionRaw).digest('hex'),
    },
  ],
  generatedAt,
  codes: [...new Set(adhesion.codigos.filter((c) => /^\d{7}$/.test(c)))].sort().join(' '),
});

// Format like the rest of `src/` so that `npm run lint` stays clean on the generated files.
const biome = fileURLToPath(new URL('../node_modules/.bin/biome', import.meta.url));
const formatted = spawnSync(biome, ['format', '--write', ...written], { stdio: 'inherit' });
if (formatted.status !== 0) throw new Error('biome format failed on the generated tables');
for (const path of written) console.log(`wrote ${path} (${statSync(path).size} bytes)`);
