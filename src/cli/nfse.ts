import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ApiClient, ApiFailure, describeProblem } from './nfse/api.ts';
import { emit, UsageError } from './nfse/emit.ts';
import { parseHeaderFile, verifyDelivery } from './nfse/webhook-verify.ts';

/**
 * `nfse`: the customer CLI (project key). `npm run nfse -- <command>` or, installed, `nfse <command>`.
 * Key: --key or NFSE_API_KEY; service: --url or NFSE_API_URL (default http://127.0.0.1:3000/api/v1).
 * Exit codes (sysexits): 0 done, 1 the service refused or something was not issued, 64 bad usage.
 */

const DEFAULT_URL = 'http://127.0.0.1:3000/api/v1';

const COMMON = `options of every command that calls the service:
  --key <svc_…>     project API key (default: NFSE_API_KEY)
  --url <url>       service API base URL (default: NFSE_API_URL or ${DEFAULT_URL})`;

const HELP: Record<string, string> = {
  '': `usage: nfse <command> [options]

commands:
  emit <file.json|file.csv>                     issue every row through POST /emitir/batch (resumable)
  status <invoiceId>                            print the invoice status
  download <invoiceId> --xml|--pdf [--cancel]   save the NFS-e XML (or the cancellation XML) or the DANFSe PDF
  cancel <invoiceId> [--motivo <text>]          request the cancellation
  webhooks verify --secret … --body … --headers …   check the signatures of a captured webhook delivery

nfse <command> --help shows the options of a command.
${COMMON}`,
  emit: `usage: nfse emit <file.json|file.csv> [--out results.csv] [--chunk-size 100] [--poll-interval 2] [--no-wait]

Sends the rows in chunks of --chunk-size (1 to 100) through POST /emitir/batch, shows the progress on stderr,
waits until every invoice is final and writes the results CSV (row, invoiceId, status, chNFSe, numeroNfse,
errorCode, errorMessage); its path is printed on stdout.
  file.json     an array of POST /emitir bodies (or {"items": [...]})
  file.csv      one invoice per row, dotted headers (tomador.cnpj, valores.total, …; see the README)
  --out         results file (default <file>.results.csv beside the input); the state file <out>.state.json
                beside it makes the run resumable: after a kill, run the same command again
  --poll-interval   seconds between status polls (default 2)
  --wait-timeout    seconds to wait for final statuses (default 3600)
  --no-wait     write the results as they are once every chunk is accepted
Exit code 0 when every row was issued (with --no-wait: none refused or in error yet), 1 otherwise.
${COMMON}`,
  status: `usage: nfse status <invoiceId>

Prints the status of the invoice (GET /invoices/{id}/status) as JSON.
${COMMON}`,
  download: `usage: nfse download <invoiceId> --xml|--pdf [--cancel] [-o file]

Saves the NFS-e XML (--xml), the cancellation event XML (--xml --cancel) or the DANFSe PDF (--pdf; watermarked
CANCELADA once cancelled). -o file (default <invoiceId>.xml, <invoiceId>-cancel.xml or <invoiceId>.pdf;
-o - writes to stdout).
${COMMON}`,
  cancel: `usage: nfse cancel <invoiceId> [--motivo <text>]

Requests the cancellation (POST /cancelar) and prints the answer; follow it with nfse status.
${COMMON}`,
  webhooks: `usage: nfse webhooks verify --secret <secret> --body <file> --headers <file> [--tolerance 300]

Checks a captured delivery: X-Svc-Signature (sha256=<hex HMAC of the body>) and the Standard Webhooks
webhook-id / webhook-timestamp / webhook-signature. --body: the raw body bytes exactly as received;
--headers: a JSON object or "Name: value" lines. --tolerance: the replay window of webhook-timestamp in
seconds (0: do not check the age). Exit code 0 when every signature present is valid.`,
};

class Usage extends Error {}

function fail(message: string, code: number): never {
  process.stderr.write(`nfse: ${message}\n`);
  process.exit(code);
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  function parse() {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        key: { type: 'string' },
        url: { type: 'string' },
        out: { type: 'string', short: 'o' },
        'chunk-size': { type: 'string' },
        'poll-interval': { type: 'string' },
        'wait-timeout': { type: 'string' },
        'no-wait': { type: 'boolean' },
        xml: { type: 'boolean' },
        pdf: { type: 'boolean' },
        cancel: { type: 'boolean' },
        motivo: { type: 'string' },
        secret: { type: 'string' },
        body: { type: 'string' },
        headers: { type: 'string' },
        tolerance: { type: 'string' },
      },
    });
  }
  try {
    parsed = parse();
  } catch (err) {
    throw new Usage((err as Error).message);
  }
  const { positionals, values } = parsed;
  const [command, ...args] = positionals;
  if (command === 'help') {
    process.stdout.write(`${HELP[args[0] ?? ''] ?? HELP['']}\n`);
    return 0;
  }
  if (!command || values.help) {
    if (command && !(command in HELP)) throw new Usage(`unknown command "${command}"`);
    process.stdout.write(`${HELP[command ?? '']}\n`);
    return command || values.help ? 0 : 2;
  }
  if (!(command in HELP)) throw new Usage(`unknown command "${command}"`);

  const int = (
    name: 'chunk-size' | 'poll-interval' | 'wait-timeout' | 'tolerance',
    fallback: number,
    min: number,
    max: number,
  ) => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new Usage(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return Number(raw);
  };
  const one = (what: string) => {
    if (args.length !== 1) throw new Usage(`${command} takes exactly one ${what}`);
    return args[0]!;
  };

  if (command === 'webhooks') {
    if (args[0] !== 'verify' || args.length !== 1) throw new Usage('the webhooks command has one subcommand: verify');
    for (const name of ['secret', 'body', 'headers'] as const)
      if (!values[name]) throw new Usage(`--${name} is required`);
    const report = verifyDelivery(
      readFileSync(values.body!),
      parseHeaderFile(readFileSync(values.headers!, 'utf8')),
      values.secret!,
      { toleranceSeconds: int('tolerance', 300, 0, 10 ** 9) },
    );
    process.stdout.write(`${report.lines.join('\n')}\n${report.ok ? 'OK' : 'FAILED'}\n`);
    return report.ok ? 0 : 1;
  }

  const key = values.key ?? process.env.NFSE_API_KEY;
  if (!key) throw new Usage('no project key: pass --key or set NFSE_API_KEY');
  const url = values.url ?? process.env.NFSE_API_URL ?? DEFAULT_URL;
  try {
    new URL(url);
  } catch {
    throw new Usage(`--url / NFSE_API_URL is not a URL: "${url}"`);
  }
  const client = new ApiClient({
    baseUrl: url,
    key,
    // emit runs long and resends safely (idempotency keys): it rides out a restart of the service
    retryForMs: command === 'emit' ? 600_000 : 0,
    onWait: (reason, ms) => process.stderr.write(`nfse: ${reason}; retrying in ${Math.ceil(ms / 1000)} s\n`),
  });

  switch (command) {
    case 'emit':
      return emit(client, {
        file: one('file'),
        out: values.out,
        chunkSize: int('chunk-size', 100, 1, 100),
        pollIntervalMs: int('poll-interval', 2, 0, 3600) * 1000,
        waitTimeoutMs: int('wait-timeout', 3600, 1, 10 ** 7) * 1000,
        wait: !values['no-wait'],
        stderr: process.stderr,
      });
    case 'status': {
      const res = await client.request('GET', `/invoices/${encodeURIComponent(one('invoiceId'))}/status`);
      if (res.status !== 200) fail(describeProblem(res), 1);
      process.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
      return 0;
    }
    case 'download': {
      const id = one('invoiceId');
      if (Boolean(values.xml) === Boolean(values.pdf)) throw new Usage('download needs exactly one of --xml and --pdf');
      if (values.cancel && values.pdf) {
        throw new Usage('--cancel selects the cancellation XML (--xml); the PDF of a cancelled invoice is watermarked');
      }
      const path = values.xml
        ? `/invoices/${encodeURIComponent(id)}/xml${values.cancel ? '?type=cancel' : ''}`
        : `/invoices/${encodeURIComponent(id)}/pdf`;
      // the API redirects to the public document URL: follow it without sending the key there
      let res = await client.request('GET', path, { redirect: 'manual' });
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        const target = new URL(location, client.baseUrl).toString();
        const doc = await fetch(target);
        res = { status: doc.status, headers: doc.headers, body: null, bytes: Buffer.from(await doc.arrayBuffer()) };
      }
      if (res.status !== 200) {
        if (!res.body && res.bytes.length > 0) {
          try {
            res.body = JSON.parse(res.bytes.toString('utf8'));
          } catch {
            /* not JSON */
          }
        }
        fail(describeProblem(res), 1);
      }
      const out = values.out ?? `${id}${values.cancel ? '-cancel' : ''}.${values.xml ? 'xml' : 'pdf'}`;
      if (out === '-') process.stdout.write(res.bytes);
      else {
        writeFileSync(out, res.bytes);
        process.stderr.write(`${out} (${res.bytes.length} bytes)\n`);
      }
      return 0;
    }
    case 'cancel': {
      const id = one('invoiceId');
      const res = await client.request('POST', '/cancelar', {
        body: { invoiceId: id, ...(values.motivo ? { motivo: values.motivo } : {}) },
      });
      if (res.status !== 202 && res.status !== 200) fail(describeProblem(res), 1);
      process.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
      return 0;
    }
  }
  throw new Usage(`unknown command "${command}"`);
}

// `npm run …` starts scripts in the package directory: file arguments are relative to where the user typed it
if (process.env.npm_lifecycle_event && process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof Usage || err instanceof UsageError) fail(`${err.message} (nfse --help)`, 64);
  if (err instanceof ApiFailure) fail(err.message, 1);
  if ((err as NodeJS.ErrnoException).code === 'ENOENT') fail((err as Error).message, 64);
  fail((err as Error).message, 1);
}
