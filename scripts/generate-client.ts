/**
 * `npm run generate-client`: writes packages/client/src/generated.ts, the typed surface of the TypeScript client,
 * from docs/openapi.json (the document the service serves; `npm run openapi` writes it and then runs this). One
 * method per operationId with its path, query and header parameters, its JSON or multipart body and a union of
 * its declared answers per status (problem+json failures, 302 redirects as a URL); the named schemas of
 * `components.schemas`; and, from the document's `webhooks`, the payload type of each event. The transport is the
 * hand-written packages/client/src/runtime.ts. test/client/generated.test.ts fails when the committed file
 * differs from what this produces.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const OPENAPI_FILE = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
export const CLIENT_FILE = fileURLToPath(new URL('../packages/client/src/generated.ts', import.meta.url));

type Schema = Record<string, unknown> & {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  format?: string;
  description?: string;
};
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: Schema;
}
interface MediaType {
  schema?: Schema;
}
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: unknown[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, MediaType> };
  responses?: Record<string, { description?: string; content?: Record<string, MediaType> }>;
}
export interface OpenApiDocument {
  info?: { title?: string; version?: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
  webhooks?: Record<string, Record<string, Operation>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
/** `binary` strings: what a caller sends in a multipart field, what a reader gets from a binary answer. */
type Direction = 'request' | 'response';

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
const literal = (v: unknown) =>
  typeof v === 'string' ? `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : JSON.stringify(v);
const propertyKey = (k: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? k : literal(k));

function docComment(text: string | undefined, indent: string): string {
  if (!text?.trim()) return '';
  const lines = text.replace(/\*\//g, '*\\/').trim().split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((l) => `${indent} *${l ? ` ${l}` : ''}`).join('\n')}\n${indent} */\n`;
}

const union = (members: string[]) => {
  const unique = [...new Set(members)];
  return unique.length ? unique.join(' | ') : 'never';
};

function tsType(schema: Schema | undefined, indent: string, direction: Direction): string {
  if (!schema || typeof schema !== 'object') return 'unknown';
  if (schema.$ref) {
    const m = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref);
    if (!m) throw new Error(`unsupported $ref ${schema.$ref}`);
    return pascal(m[1]!);
  }
  if (schema.const !== undefined) return literal(schema.const);
  if (schema.enum) return union(schema.enum.map(literal));
  if (schema.anyOf || schema.oneOf) {
    return union((schema.anyOf ?? schema.oneOf)!.map((s) => wrapUnion(tsType(s, indent, direction))));
  }
  if (schema.allOf) return schema.allOf.map((s) => wrapUnion(tsType(s, indent, direction))).join(' & ');
  if (Array.isArray(schema.type)) {
    return union(schema.type.map((t) => tsType({ ...schema, type: t }, indent, direction)));
  }
  switch (schema.type) {
    case 'string':
      if (schema.format === 'binary') return direction === 'request' ? 'FileInput' : 'Uint8Array';
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = tsType(schema.items, indent, direction);
      return /^[A-Za-z0-9_]+$/.test(item) ? `${item}[]` : `Array<${item}>`;
    }
    case 'object':
      return objectType(schema, indent, direction);
    default:
      return schema.properties ? objectType(schema, indent, direction) : 'unknown';
  }
}

const wrapUnion = (t: string) => (t.includes(' | ') && !t.startsWith('{') ? `(${t})` : t);

function objectType(schema: Schema, indent: string, direction: Direction): string {
  const props = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties;
  if (!props.length) {
    if (extra && typeof extra === 'object') return `Record<string, ${tsType(extra, indent, direction)}>`;
    return extra === false ? 'Record<string, never>' : 'Record<string, unknown>';
  }
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  let out = '{\n';
  for (const [name, prop] of props) {
    out += docComment(prop.description, inner);
    out += `${inner}${propertyKey(name)}${required.has(name) ? '' : '?'}: ${tsType(prop, inner, direction)};\n`;
  }
  if (extra === true) out += `${inner}[key: string]: unknown;\n`;
  else if (extra && typeof extra === 'object') out += `${inner}[key: string]: unknown;\n`;
  return `${out}${indent}}`;
}

function authOf(path: string, operation: Operation): string {
  if (Array.isArray(operation.security) && operation.security.length === 0) return 'none';
  if (path.startsWith('/api/v1/org/') || path === '/api/v1/org') return 'organization';
  if (path.startsWith('/api/v1/admin/') || path === '/api/v1/admin') return 'operator';
  return 'project';
}

function pickMedia(content: Record<string, MediaType> | undefined): [string, MediaType] | null {
  const entries = Object.entries(content ?? {});
  return entries.find(([t]) => t === 'application/json') ?? entries[0] ?? null;
}

export function generateClient(document: OpenApiDocument): string {
  const names = new Set<string>();
  const declare = (name: string, text: string) => {
    if (names.has(name)) throw new Error(`two generated declarations named ${name}`);
    names.add(name);
    return text;
  };
  const parts: string[] = [];
  parts.push(
    `// Generated by scripts/generate-client.ts from docs/openapi.json (${document.info?.title ?? 'API'} ${document.info?.version ?? ''}).\n` +
      '// Do not edit: run `npm run generate-client` (`npm run openapi` runs it too).\n' +
      "import { BaseClient, type CallOptions, type Failure, type FileInput, type OperationSpec, type Redirect, type Success } from './runtime.ts';\n",
  );

  // a component that is a request body is what a caller sends (its binary fields are FileInput); others are read
  const requestComponents = new Set<string>();
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      for (const media of Object.values(item[method]?.requestBody?.content ?? {})) {
        const m = /^#\/components\/schemas\/(.+)$/.exec(media.schema?.$ref ?? '');
        if (m) requestComponents.add(m[1]!);
      }
    }
  }
  parts.push('// ── Named schemas (components.schemas) ──\n');
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) {
    const direction: Direction = requestComponents.has(name) ? 'request' : 'response';
    parts.push(
      declare(
        pascal(name),
        `${docComment(schema.description, '')}export type ${pascal(name)} = ${tsType(schema, '', direction)};\n`,
      ),
    );
  }

  const operations: { id: string; method: string; path: string; op: Operation }[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (!op.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      operations.push({ id: op.operationId, method, path, op });
    }
  }

  const specs: string[] = [];
  const methods: string[] = [];
  parts.push('// ── Operations ──\n');
  for (const { id, method, path, op } of operations) {
    const P = pascal(id);
    const params = (op.parameters ?? []).filter((p) => p.in !== 'cookie');
    const media = pickMedia(op.requestBody?.content);
    const bodyKind = !media ? 'none' : media[0] === 'multipart/form-data' ? 'multipart' : 'json';
    const statuses = Object.keys(op.responses ?? {})
      .filter((s) => /^\d{3}$/.test(s))
      .sort();

    // input
    const fields: string[] = [];
    let inputRequired = false;
    for (const where of ['path', 'query', 'header'] as const) {
      const group = params.filter((p) => p.in === where);
      if (!group.length) continue;
      const schema: Schema = {
        type: 'object',
        properties: Object.fromEntries(
          group.map((p) => [p.name, { ...p.schema, description: p.description ?? p.schema?.description }]),
        ),
        required: group.filter((p) => p.required).map((p) => p.name),
      };
      const needed = group.some((p) => p.required);
      inputRequired ||= needed;
      fields.push(
        `  ${where === 'header' ? 'headers' : where}${needed ? '' : '?'}: ${tsType(schema, '  ', 'request')};\n`,
      );
    }
    if (media) {
      parts.push(declare(`${P}Body`, `export type ${P}Body = ${tsType(media[1].schema, '', 'request')};\n`));
      const needed = op.requestBody?.required === true;
      inputRequired ||= needed;
      fields.push(`  body${needed ? '' : '?'}: ${P}Body;\n`);
    }
    parts.push(
      declare(
        `${P}Input`,
        fields.length
          ? `export interface ${P}Input {\n${fields.join('')}}\n`
          : `export type ${P}Input = Record<string, never>;\n`,
      ),
    );

    // answers
    const successes = statuses.filter((s) => s.startsWith('2') && op.responses![s]!.content);
    const members: string[] = [];
    for (const status of statuses) {
      const response = op.responses![status]!;
      const content = pickMedia(response.content);
      const data = content ? tsType(content[1].schema, '', 'response') : 'undefined';
      if (status.startsWith('3')) members.push(`Redirect<${status}>`);
      else if (status.startsWith('2')) {
        if (content) {
          const name = successes.length > 1 ? `${P}Result${status}` : `${P}Result`;
          parts.push(declare(name, `${docComment(response.description, '')}export type ${name} = ${data};\n`));
          members.push(`Success<${status}, ${name}>`);
        } else members.push(`Success<${status}, undefined>`);
      } else members.push(`Failure<${status}, ${data}>`);
    }
    parts.push(declare(`${P}Response`, `export type ${P}Response =\n${members.map((m) => `  | ${m}`).join('\n')};\n`));

    specs.push(
      `  ${id}: { operationId: '${id}', method: '${method.toUpperCase()}', path: '${path}', auth: '${authOf(path, op)}', body: '${bodyKind}', statuses: [${statuses.join(', ')}] },\n`,
    );
    const doc = [op.summary, op.description].filter(Boolean).join('\n\n');
    methods.push(
      `${docComment(`${doc}\n\n\`${method.toUpperCase()} ${path}\``, '  ')}` +
        `  ${id}(input: ${P}Input${inputRequired ? '' : ' = {}'}, options?: CallOptions): Promise<${P}Response> {\n` +
        `    return this.call(operations.${id}, input, options) as Promise<${P}Response>;\n  }\n`,
    );
  }

  parts.push(
    '/** Every operation of the document: method, path template, credential, body kind and declared statuses. */\n' +
      `export const operations = {\n${specs.join('')}} as const satisfies Record<string, OperationSpec>;\n`,
    'export type OperationId = keyof typeof operations;\n',
  );

  // webhooks
  parts.push("// ── Webhook events (the document's `webhooks`) ──\n");
  const events: string[] = [];
  for (const [name, item] of Object.entries(document.webhooks ?? {})) {
    const op = item.post ?? Object.values(item)[0];
    const media = pickMedia(op?.requestBody?.content);
    if (!op || !media) continue;
    const typeName = `${pascal(name)}Event`;
    const doc = [op.summary, op.description].filter(Boolean).join('\n\n');
    parts.push(
      declare(
        typeName,
        `${docComment(doc, '')}export type ${typeName} = ${tsType(media[1].schema, '', 'response')};\n`,
      ),
    );
    events.push(typeName);
  }
  parts.push(
    events.length
      ? `/** Any delivery's envelope, discriminated by \`event\`. */\nexport type WebhookEvent =\n${events.map((e) => `  | ${e}`).join('\n')};\n`
      : '/** A delivery envelope (the document describes no webhooks). */\nexport type WebhookEvent = { event: string; deliveryId: string; timestamp: string; data: Record<string, unknown> };\n',
    "export type WebhookEventName = WebhookEvent['event'];\n",
  );

  parts.push(
    '/**\n * The typed client: one method per operationId. Each answers the union of the statuses the document\n' +
      ' * declares (`ok` true for 2xx and redirects); an undeclared status throws `UnexpectedStatusError`.\n */\n' +
      `export class NfseClient extends BaseClient {\n${methods.join('\n')}}\n`,
  );
  return parts.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const document = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;
  const text = generateClient(document);
  writeFileSync(CLIENT_FILE, text);
  process.stdout.write(
    `${CLIENT_FILE}: ${Object.keys(document.paths).length} paths, ${text.split('\n').length} lines\n`,
  );
}
