import { openSecret } from '../certificates/vault.ts';
import type { AppContext } from '../context.ts';
import { loadInvoiceWithProject } from '../db/repositories/invoices.ts';
import { type loadProjectRow, toFiscalProfile } from '../db/repositories/project-profile.ts';
import type { invoices } from '../db/schema.ts';
import type { ProjectFiscalProfile } from '../domain/project-profile.ts';
import type { ProjectCredentials } from '../engines/kit/auth.ts';
import { type Connection, describeFailure, type EngineFamily, type Failure } from '../engines/types.ts';
import type { JobContext } from '../jobs/queue.ts';

/** Thrown at the job boundary only: asks the queue to retry the job under its policy. */
export class RetryLater extends Error {}

export type InvoiceRow = typeof invoices.$inferSelect;

/** What every invoice job works on: the invoice, its project, its engine and the connection to the government. */
export interface JobSubject {
  invoice: InvoiceRow;
  project: ProjectFiscalProfile;
  engine: EngineFamily;
  connection: Connection;
  /** As read with the invoice: the project's row and the base of the invoice's document URLs (for the documents). */
  read: { projectRow: NonNullable<Awaited<ReturnType<typeof loadProjectRow>>>; storageBaseUrl: string | null };
}

/**
 * The one skeleton of the invoice jobs (issue, poll, cancel): load the invoice (returning null when the job has
 * nothing left to do), its project and its certificate (`loadInvoiceWithProject`), and pick its engine. A missing
 * project or certificate ends the job through `refuse`, which records the refusal where that job records it.
 */
export async function loadJobSubject(
  ctx: AppContext,
  invoiceId: string,
  options: {
    wanted: (invoice: InvoiceRow) => boolean;
    refuse: (code: string, message: string) => Promise<void>;
  },
): Promise<JobSubject | null> {
  const found = await loadInvoiceWithProject(ctx.db, ctx.database.changes, invoiceId);
  const invoice = found?.invoice;
  if (!invoice || !options.wanted(invoice)) return null;
  const projectRow = found.project;
  if (!projectRow) {
    await options.refuse('PROJECT_NOT_FOUND', 'The project no longer exists');
    return null;
  }
  const loaded = await ctx.certificates.forProject(projectRow.id, ctx.now(), found.certificate);
  if (!loaded.ok) {
    await options.refuse(loaded.code, loaded.message);
    return null;
  }
  return {
    invoice,
    project: toFiscalProfile(projectRow),
    engine: ctx.engines.get(invoice.engine),
    connection: {
      certificate: loaded.certificate,
      ambiente: invoice.ambiente === 1 ? 1 : 2,
      credentials: credentialsOf(projectRow, ctx.config.masterKey),
      municipality: projectRow.codigoMunicipio,
      endpointOverride: projectRow.endpointOverride,
    },
    read: { projectRow, storageBaseUrl: found.storageBaseUrl },
  };
}

/**
 * The project's engine credentials (spec 2.1), opened from their sealed columns. `cscToken` is the token a provider
 * issues to the company: sent as the Bearer token or the header token, as the family's auth kind says.
 */
function credentialsOf(
  row: NonNullable<Awaited<ReturnType<typeof loadProjectRow>>>,
  masterKey: Buffer,
): ProjectCredentials {
  const open = (sealed: string | null) =>
    sealed ? openSecret(Buffer.from(sealed, 'base64'), masterKey).toString('utf8') : null;
  const token = open(row.cscTokenSealed);
  return {
    basicAuthUsuario: row.basicAuthUsuario,
    basicAuthSenha: open(row.basicAuthSenhaSealed),
    accessToken: token,
    authorizationKey: token,
    cnpjPrefeitura: row.cnpjPrefeitura,
  };
}

/**
 * A failure that may pass (transient, unknown): retried under the job's policy, or, on the last attempt, ended by
 * `giveUp` with the reason (the jobs' GOVERNMENT_UNAVAILABLE).
 */
export async function retryOrGiveUp(
  ctx: AppContext,
  job: JobContext,
  outcome: Failure,
  log: Record<string, unknown>,
  giveUp: (reason: string, attempts: number) => Promise<void>,
): Promise<void> {
  const reason = describeFailure(outcome);
  if (job.isLastAttempt) {
    await giveUp(reason, job.retryCount + 1);
    return;
  }
  ctx.logger.warn({ ...log, reason, attempt: job.retryCount + 1 }, 'invoice job will be retried');
  throw new RetryLater(reason);
}
