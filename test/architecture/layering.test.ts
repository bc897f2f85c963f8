import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The layering of `src/` (ARCHITECTURE.md, "Layers"): every top-level module (a folder of `src/`, or a file at its
 * root) sits in one layer, bottom first, and may import only from its own layer or the ones below. Imports within
 * one layer are allowed as long as the modules do not form a cycle. Type-only imports count: a type is a
 * dependency too.
 */
const LAYERS: readonly (readonly string[])[] = [
  // pure building blocks: XML mechanics, fiscal rules and tables, document storage drivers, API key formats and
  // scopes, the API's paths, the data directory's modes, the logger
  ['xml', 'domain', 'storage', 'access', 'api-paths', 'data-dir', 'logging'],
  // schema, client, repositories
  ['db'],
  // over the database: the certificate store, the job queue and its catalogue; the typed configuration
  ['certificates', 'jobs', 'config'],
  // the government side: engines (our clients) and the sandbox (the local government services)
  ['engines', 'sandbox'],
  // the collaborators every application service and route receives
  ['context'],
  // application services
  ['events'],
  ['invoices', 'domains', 'webhooks'],
  ['documents'],
  // the HTTP edge
  ['http'],
  // entry points and the composition root
  ['cli', 'wiring', 'service', 'main'],
];

/**
 * Known upward imports, `from -> to` (paths below `src/`), each with the reason it is tolerated. An entry that no
 * longer matches any import fails the test, so it is removed once fixed.
 */
const ALLOWED_UPWARD: ReadonlyMap<string, string> = new Map<string, string>([]);

/** Known import cycles between files (value imports), as sorted member lists joined by ` <-> `. */
const ALLOWED_FILE_CYCLES: ReadonlyMap<string, string> = new Map<string, string>([]);

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SRC = join(ROOT, 'src');

interface Import {
  from: string;
  to: string;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mts|cts)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const posix = (path: string) => path.split(sep).join('/');

/** Static imports and re-exports (`… from '…'`, `import '…'`) and dynamic `import('…')` of relative paths. */
function importsOf(file: string): Import[] {
  const code = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const found: Import[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    if (!specifier.startsWith('.')) return; // packages and node: builtins
    found.push({
      from: posix(relative(SRC, file)),
      to: posix(relative(SRC, resolve(dirname(file), specifier))),
      typeOnly,
    });
  };
  const staticImport = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;
  for (const m of code.matchAll(staticImport)) add(m[3]!, m[2] !== undefined);
  for (const m of code.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) add(m[1]!, false);
  return found;
}

/** The top-level module of a path below `src/`: its first folder, or the file's name without extension. */
function moduleOf(path: string): string {
  const [first, ...rest] = path.split('/');
  return rest.length > 0 ? first! : first!.replace(/\.(ts|mts|cts)$/, '');
}

const layerOf = new Map<string, number>();
LAYERS.forEach((modules, rank) => {
  for (const m of modules) layerOf.set(m, rank);
});

/** Strongly connected components with more than one member (Tarjan). */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

const files = sourceFiles(SRC);
const imports = files.flatMap(importsOf);
const edgeKey = (i: Import) => `${i.from} -> ${i.to}`;

describe('layering of src/ (ARCHITECTURE.md, "Layers")', () => {
  it('finds the imports (the parser is not blind)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(imports.length).toBeGreaterThan(300);
    expect(imports.some((i) => i.from === 'service.ts' && i.to === 'wiring/workers.ts')).toBe(true);
    expect(imports.some((i) => i.from === 'service.ts' && i.to === 'storage/s3.ts')).toBe(true); // import('…')
    expect(imports.some((i) => i.from === 'http/auth.ts' && i.to === 'access/scopes.ts' && i.typeOnly)).toBe(true);
  });

  it('every relative import names an existing file', () => {
    const missing = imports.filter((i) => !files.includes(join(SRC, i.to))).map(edgeKey);
    expect(missing).toEqual([]);
  });

  it('every top-level module of src/ is placed in exactly one layer, and every listed module exists', () => {
    const modules = new Set(files.map((f) => moduleOf(posix(relative(SRC, f)))));
    const listed = LAYERS.flat();
    expect([...modules].filter((m) => !layerOf.has(m)).sort(), 'modules missing from LAYERS').toEqual([]);
    expect(
      listed.filter((m) => !modules.has(m)),
      'LAYERS names modules that do not exist',
    ).toEqual([]);
    expect(listed.length, 'a module is listed twice').toBe(new Set(listed).size);
  });

  it('no module imports from a layer above its own', () => {
    const upward = imports.filter((i) => layerOf.get(moduleOf(i.to))! > layerOf.get(moduleOf(i.from))!);
    const keys = [...new Set(upward.map(edgeKey))].sort();
    expect(
      keys.filter((k) => !ALLOWED_UPWARD.has(k)),
      'upward imports (move the code down, or pass it in from above)',
    ).toEqual([]);
    expect(
      [...ALLOWED_UPWARD.keys()].filter((k) => !keys.includes(k)),
      'stale ALLOWED_UPWARD entries',
    ).toEqual([]);
  });

  it('no import cycle between top-level modules', () => {
    const graph = new Map<string, Set<string>>();
    for (const i of imports) {
      if (ALLOWED_UPWARD.has(edgeKey(i))) continue;
      const [a, b] = [moduleOf(i.from), moduleOf(i.to)];
      if (a === b) continue;
      graph.set(a, (graph.get(a) ?? new Set()).add(b));
    }
    const found = cycles(graph).map((c) => {
      // the imports that close the cycle: those not going down a layer
      const edges = imports
        .filter((i) => c.includes(moduleOf(i.from)) && c.includes(moduleOf(i.to)))
        .filter((i) => moduleOf(i.from) !== moduleOf(i.to))
        .filter((i) => layerOf.get(moduleOf(i.to))! >= layerOf.get(moduleOf(i.from))!)
        .map(edgeKey);
      return `${c.join(' <-> ')}: ${[...new Set(edges)].join(', ')}`;
    });
    expect(found).toEqual([]);
  });

  it('no import cycle between files (value imports; type-only imports are erased at run time)', () => {
    const graph = new Map<string, Set<string>>();
    for (const i of imports) {
      if (i.typeOnly) continue;
      graph.set(i.from, (graph.get(i.from) ?? new Set()).add(i.to));
    }
    const found = cycles(graph).map((c) => c.join(' <-> '));
    expect(
      found.filter((c) => !ALLOWED_FILE_CYCLES.has(c)),
      'file cycles',
    ).toEqual([]);
    expect(
      [...ALLOWED_FILE_CYCLES.keys()].filter((c) => !found.includes(c)),
      'stale ALLOWED_FILE_CYCLES entries',
    ).toEqual([]);
  });
});

/**
 * One XML reader kit (`src/xml/`): the service parses XML only through `xml/read.ts`; the sandbox keeps parsers of its
 * own on purpose (it plays the government, independently of our code).
 */
describe('one XML reader kit', () => {
  /** Files outside `xml/` and `sandbox/` that still parse XML themselves, with the replacement to use. */
  const ALLOWED_PARSERS: ReadonlyMap<string, string> = new Map<string, string>([]);

  it('only xml/ (and the sandbox) use an XML parser package', () => {
    const parsers = files
      .map((f) => posix(relative(SRC, f)))
      .filter((p) => !p.startsWith('xml/') && !p.startsWith('sandbox/'))
      .filter((p) =>
        /from\s+['"](@xmldom\/xmldom|fast-xml-parser|xml2js|sax|libxmljs2?)['"]/.test(
          readFileSync(join(SRC, p), 'utf8'),
        ),
      );
    expect(
      parsers.filter((p) => !ALLOWED_PARSERS.has(p)),
      'parse through src/xml/read.ts',
    ).toEqual([]);
    expect(
      [...ALLOWED_PARSERS.keys()].filter((p) => !parsers.includes(p)),
      'stale ALLOWED_PARSERS entries',
    ).toEqual([]);
  });
});
