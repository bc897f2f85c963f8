import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import { createA1Certificate } from '../src/certificates/generate.ts';
import { createFreshDatabase } from '../test/support/databases.ts';

/** Shared helpers of the benchmarks: child services, a closed-loop HTTP load generator, figures. */

export const ROOT = new URL('../', import.meta.url).pathname;
export const ADMIN_URL =
  process.env.BENCH_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function createDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  return createFreshDatabase(ADMIN_URL, 'nfse_bench');
}

export interface Child {
  process: ChildProcess;
  stop(): Promise<void>;
  /** peak resident set size so far (VmHWM), MB */
  peakRssMb(): number;
  rssMb(): number;
}

/**
 * Starts a script in a child process: through tsx, or with `compiled` the built entry as `npm start` runs it
 * (`node scripts/run.mjs src/<entry>.ts`: dist/, rebuilt first if older than the sources).
 */
export function startChild(
  script: string,
  args: string[],
  env: Record<string, string>,
  options: { compiled?: boolean } = {},
): Child {
  const argv = options.compiled ? ['scripts/run.mjs', script, ...args] : ['--import', 'tsx', script, ...args];
  const child = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout?.resume();
  const status = (field: string) => {
    try {
      const text = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
      return kb / 1024;
    } catch {
      return 0;
    }
  };
  return {
    process: child,
    peakRssMb: () => status('VmHWM'),
    rssMb: () => status('VmRSS'),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
      }),
  };
}

export async function waitForHttp(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      /* not yet */
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  statuses: Record<number, number>;
}

/** Closed-loop load: `connections` loops each sending one request after the other for `seconds`. */
export async function load(options: {
  origin: string;
  path: string | ((i: number) => string);
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: (i: number) => string;
  connections: number;
  seconds: number;
  /** receives each answer's status and body (otherwise bodies are discarded unread) */
  onBody?: (status: number, text: string) => void;
}): Promise<LoadResult> {
  const pool = new Pool(options.origin, { connections: options.connections, pipelining: 1 });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let counter = 0;
  const end = performance.now() + options.seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < end) {
        const i = counter++;
        const t0 = performance.now();
        const res = await pool.request({
          path: typeof options.path === 'function' ? options.path(i) : options.path,
          method: options.method ?? 'GET',
          headers: options.headers,
          body: options.body?.(i),
        });
        if (options.onBody) options.onBody(res.statusCode, await res.body.text());
        else await res.body.dump();
        latencies.push(performance.now() - t0);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  return { requests: latencies.length, seconds, rps: latencies.length / seconds, p50: q(0.5), p99: q(0.99), statuses };
}

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function printTable(title: string, rows: (string | number)[][]): void {
  console.log(`\n## ${title}\n`);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => String(r[c]).length)));
  for (const [i, row] of rows.entries()) {
    console.log(`| ${row.map((v, c) => String(v).padEnd(widths[c]!)).join(' | ')} |`);
    if (i === 0) console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  }
}

/** The POST /emitir body every benchmark sends: a CNPJ taker with its address (E0235), the project's defaults apply. */
export const BENCH_INVOICE = {
  tomador: {
    cnpj: '11444777000161',
    nome: 'Cliente Tomador SA',
    endereco: {
      logradouro: 'Av. Paulista',
      numero: '1000',
      bairro: 'Bela Vista',
      cidade: 'São Paulo',
      uf: 'SP',
      cep: '01310100',
    },
  },
  servico: { descricao: 'Desenvolvimento de software', codigo: '010101' },
  valores: { total: 1500.5, aliquotaIss: 2 },
};

/**
 * A benchmark's customer, over HTTP as a user: an organization (key ceiling raised by the operator), a Recife
 * project (national adherent) with its A1 certificate, and a project key; returns that key.
 */
export async function onboardBenchProject(origin: string, adminKey: string): Promise<string> {
  const call = async (method: string, path: string, key: string, body?: unknown) => {
    const res = await fetch(`${origin}${path}`, {
      method,
      headers: {
        'x-api-key': key,
        ...(body && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
      },
      body: body instanceof FormData ? body : body ? JSON.stringify(body) : undefined,
    });
    return res.json();
  };
  const org = await call('POST', '/admin/organizations', adminKey, { name: 'Bench', plan: 'enterprise' });
  // the benchmark's key asks for 1,000,000 requests a minute: the operator raises this organization's ceiling
  await call('PUT', `/admin/organizations/${org.id}/limits`, adminKey, { keyRateLimitCeiling: 1_000_000 });
  const project = await call('POST', '/org/projects', org.token, {
    name: 'E',
    cnpj: '11222333000181',
    razaoSocial: 'EMPRESA EXEMPLO LTDA',
    regimeTributario: '1',
    codigoMunicipio: '2611606', // Recife: national adherent, no sandbox ADN parametrisation
    inscricaoMunicipal: '12345',
    serieNfse: '1',
    defaultNbs: '115021000',
    defaultIndicadorOperacao: '100301',
    defaultClassificacaoTributaria: '000001',
    defaultCstIbscbs: '000',
  });
  const a1 = createA1Certificate({ cnpj: '11222333000181', name: 'EMPRESA EXEMPLO LTDA', password: 'x' });
  const form = new FormData();
  form.set('password', 'x');
  form.set('file', new Blob([new Uint8Array(a1.pfx)]), 'a1.pfx');
  await call('POST', `/org/projects/${project.id}/certificate`, org.token, form);
  const created = await call('POST', `/org/projects/${project.id}/api-keys`, org.token, {
    name: 'b',
    rateLimitPerMinute: 1_000_000,
  });
  return created.key as string;
}
