import type { ApiOperation } from './route-checks.ts';

/**
 * Mutations derived from the served OpenAPI document (test/service/fuzz.test.ts): for each operation, its body
 * fields (walked from the request schema), query and path parameters, each given hostile values, removed, or
 * joined by unknown ones; plus malformed raw bodies and wrong content types. Deterministic for a seed.
 */

// biome-ignore lint/suspicious/noExplicitAny: JSON schemas and values of any shape
export type Json = any;

/** A small seeded PRNG (mulberry32): the same seed gives the same requests. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export function pickSome<T>(rand: () => number, items: readonly T[], n: number): T[] {
  const copy = [...items];
  const out: T[] = [];
  while (out.length < n && copy.length > 0) out.push(copy.splice(Math.floor(rand() * copy.length), 1)[0]!);
  return out;
}

const nested = (levels: number): Json => {
  let value: Json = 'bottom';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

/** Values of every wrong kind: types, huge and special numbers, text PostgreSQL cannot store, sizes, shapes. */
export const HOSTILE_VALUES: Json[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e21,
  -1e21,
  1e308,
  2 ** 53 + 1,
  1e20,
  '',
  ' ',
  '0',
  '1e21',
  '99999999999999999999',
  'a\u0000b',
  '\u0000',
  '\ud800',
  'x\udc00',
  '😀'.repeat(200),
  'x'.repeat(10_000),
  '../../../etc/passwd',
  "' or 1=1 --",
  '<a>&amp;</a>',
  '2026-02-30T25:61:00Z',
  'https://127.0.0.1/',
  [],
  [null],
  ['x', 1, {}],
  Array.from({ length: 200 }, (_, i) => i),
  {},
  { $gt: '' },
  nested(8),
  nested(40),
];

/** Raw bodies that are not what a JSON route expects. */
export const RAW_BODIES: string[] = [
  '{',
  '{"a": 1,}',
  "{'a': 1}",
  '{"a": 1} trailing',
  'null',
  '[]',
  '"text"',
  '1e999',
  '{"a": 1e999}',
  '{"a": "\\ud800"}',
  '{"a\\u0000": 1}',
  '{"__proto__": {"polluted": true}}',
  '{"constructor": {"prototype": {"polluted": true}}}',
  `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
  `${'{"a":'.repeat(2_000)}1${'}'.repeat(2_000)}`,
  '\ufeff{}',
];

/** Query and path values, as they appear in the URL (already percent-encoded where needed). */
export const HOSTILE_URL_VALUES: string[] = [
  '',
  '0',
  '-1',
  '1.5',
  '1e21',
  '1e999',
  '99999999999999999999',
  'NaN',
  'true',
  'null',
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%FF',
  '%',
  '%F0%9F%98%80',
  'x'.repeat(300),
  '00000000-0000-0000-0000-000000000000',
  'not-a-uuid',
  "'%20or%201=1%20--",
  '..%2F..%2Fetc%2Fpasswd',
  '[]',
];

type Path = (string | number)[];

/** The field paths of a request body schema (objects and, with an index 0, arrays), up to `maxDepth`. */
export function fieldPaths(schema: Json, maxDepth = 5, prefix: Path = []): Path[] {
  if (!schema || typeof schema !== 'object' || prefix.length >= maxDepth) return [];
  const out: Path[] = [];
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) {
    out.push(...fieldPaths(branch, maxDepth, prefix));
  }
  if (schema.properties) {
    for (const [name, child] of Object.entries(schema.properties)) {
      out.push([...prefix, name]);
      out.push(...fieldPaths(child, maxDepth, [...prefix, name]));
    }
  }
  if (schema.items && !Array.isArray(schema.items)) {
    out.push([...prefix, 0]);
    out.push(...fieldPaths(schema.items, maxDepth, [...prefix, 0]));
  }
  const seen = new Set<string>();
  return out.filter((p) => {
    const key = JSON.stringify(p);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The required field paths of a schema (to remove them one at a time). */
export function requiredPaths(schema: Json, maxDepth = 4, prefix: Path = []): Path[] {
  if (!schema || typeof schema !== 'object' || prefix.length >= maxDepth) return [];
  const out: Path[] = [];
  for (const name of schema.required ?? []) out.push([...prefix, name]);
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    out.push(...requiredPaths(child, maxDepth, [...prefix, name]));
  }
  return out;
}

/** A value that satisfies simple schemas (the fallback when a test gives no known-good body). */
export function sampleOf(schema: Json): Json {
  if (!schema || typeof schema !== 'object') return null;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (schema.const !== undefined) return schema.const;
  const branch = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (branch) return sampleOf(branch);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, Json> = {};
      for (const name of schema.required ?? []) out[name] = sampleOf(schema.properties?.[name]);
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schema.items));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'date-time') return new Date().toISOString();
      if (schema.format === 'email') return 'fuzz@exemplo.com.br';
      if (schema.format === 'uuid') return '00000000-0000-4000-8000-000000000000';
      if (schema.format === 'uri') return 'https://exemplo.com.br/';
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    default:
      return null;
  }
}

const clone = (value: Json): Json => (value === undefined ? undefined : structuredClone(value));

export function setAt(root: Json, path: Path, value: Json): Json {
  const out = clone(root) ?? {};
  let node = out;
  for (const [i, key] of path.entries()) {
    if (i === path.length - 1) {
      node[key] = value;
      break;
    }
    if (!node[key] || typeof node[key] !== 'object') node[key] = typeof path[i + 1] === 'number' ? [] : {};
    node = node[key];
  }
  return out;
}

export function deleteAt(root: Json, path: Path): Json {
  const out = clone(root);
  let node = out;
  for (const [i, key] of path.entries()) {
    if (!node || typeof node !== 'object') return out;
    if (i === path.length - 1) {
      if (Array.isArray(node)) node.splice(Number(key), 1);
      else delete node[key];
    } else node = node[key];
  }
  return out;
}

/** The JSON request body schema of an operation, if it takes one. */
export function jsonBodySchema(op: ApiOperation): Json | null {
  return op.operation.requestBody?.content?.['application/json']?.schema ?? null;
}

export function multipartSchema(op: ApiOperation): Json | null {
  return op.operation.requestBody?.content?.['multipart/form-data']?.schema ?? null;
}

/** The route family of an operation, for the counts: the first segment after /api/v1 (emitir, org, …). */
export function familyOf(path: string): string {
  return path.replace(/^\/api\/v1\//, '').split('/')[0]!;
}
