import { createAdnParametersService } from '../adn/parametrizacao.ts';
import { MUNICIPAL_SANDBOXES } from '../municipal.ts';
import { type SandboxFaults, SandboxHttpError, startSandboxServer } from '../kit/server.ts';
import type { SandboxSigner } from '../kit/xml-signature.ts';
import { createSefinService } from './service.ts';
import { type IssuedRecord, SefinStore } from './store.ts';

export type { IssuedEvent, IssuedRecord } from './store.ts';
export { SANDBOX_APP_VERSION } from './service.ts';

/**
 * The national family's sandbox: a local stand-in of the Sefin Nacional API (issue, query, events; ./service.ts)
 * and, on the same server, of the ADN Parâmetros Municipais API (../adn/parametrizacao.ts), both kit services
 * (../kit/server.ts) over HTTPS with client certificates requested. Faults (latency, 500s, dropped connections,
 * commit-then-drop) can be injected into Sefin; with `sandboxDir` every exchange of both is recorded in
 * `<sandboxDir>/national/exchanges.jsonl`.
 */

export type SefinFaults = SandboxFaults;

export interface SefinSandboxOptions {
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  tls: { keyPem: string; certPem: string };
  /** The key and certificate the sandbox signs NFS-e and events with. */
  signer: SandboxSigner;
  /** JSONL file that keeps what was issued across restarts; null/absent keeps it in memory only. */
  storeFile?: string | null;
  /** The sandbox's directory (the service's `DATA_DIR/sandbox`): exchanges go to `<sandboxDir>/national/`. */
  sandboxDir?: string | null;
  faults?: SefinFaults;
  now?: () => Date;
  logger?: { info(message: string): void; warn(message: string): void };
  /** ISS rate (%) when the DPS has no pAliq (the real system takes it from the municipality). Default 2. */
  defaultIssRate?: number;
  /** Source of randomness for the fault decisions (tests may pin it). */
  random?: () => number;
  /** CNPJs/CPFs the simulated federal registry does not know (a DPS whose taker is one of them: E0190/E0207). */
  unregisteredDocuments?: string[];
}

export interface SefinSandbox {
  /** `https://127.0.0.1:port`; the API lives under `/producao/SefinNacional` and `/producaorestrita/SefinNacional`. */
  url: string;
  setFaults(faults: SefinFaults): void;
  /** Replaces the list of CNPJs/CPFs unknown to the simulated federal registry. */
  setUnregisteredDocuments(documents: string[]): void;
  issued(): IssuedRecord[];
  /** The exchange log (`<sandboxDir>/national/exchanges.jsonl`), null without `sandboxDir`. */
  exchangesFile(): string | null;
  /** Resolves when the exchanges so far are written to the log. */
  flushExchanges(): Promise<void>;
  close(): Promise<void>;
}

export async function startSefinSandbox(options: SefinSandboxOptions): Promise<SefinSandbox> {
  const logger = options.logger ?? { info: () => {}, warn: () => {} };
  const store = new SefinStore(options.storeFile ?? null, (m) => logger.warn(m));
  let unregistered = new Set(options.unregisteredDocuments ?? []);

  const sefin = createSefinService(
    {
      signer: options.signer,
      store,
      now: options.now ?? (() => new Date()),
      logger,
      defaultIssRate: options.defaultIssRate ?? 2,
      registry: { isRegistered: (document) => !unregistered.has(document) },
    },
    [
      {
        method: 'PUT',
        path: '/__sandbox/registry',
        handler: (req) => {
          const list = req.json()?.unregistered;
          if (!Array.isArray(list) || !list.every((d) => typeof d === 'string')) {
            throw new SandboxHttpError(400, 'body must be {"unregistered": ["<CNPJ or CPF>", …]}');
          }
          unregistered = new Set(list as string[]);
          return { status: 200, body: { unregistered: [...unregistered] } };
        },
      },
      {
        method: 'GET',
        path: '/__sandbox/issued',
        handler: () => ({
          status: 200,
          body: store.all().map(({ nfseXml: _xml, events, ...rest }) => ({
            ...rest,
            events: events.map(({ eventoXml: _evt, ...event }) => event),
          })),
        }),
      },
    ],
  );

  const server = await startSandboxServer({
    host: options.host,
    port: options.port,
    transport: { kind: 'https', tls: options.tls, clientCertificates: 'requested' },
    services: [
      sefin,
      createAdnParametersService(),
      ...MUNICIPAL_SANDBOXES.map((m) =>
        m.create({
          signer: options.signer,
          now: options.now ?? (() => new Date()),
          logger,
          dataDir: options.sandboxDir ?? null,
        }),
      ),
    ],
    sandboxDir: options.sandboxDir ?? null,
    faults: options.faults,
    random: options.random,
    logger,
  });

  return {
    url: server.url,
    setFaults: (faults) => server.setFaults(faults),
    setUnregisteredDocuments(documents) {
      unregistered = new Set(documents);
    },
    issued: () => store.all(),
    exchangesFile: () => server.exchangesFile(sefin.family),
    flushExchanges: () => server.flushExchanges(),
    close: () => server.close(),
  };
}
