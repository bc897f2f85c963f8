import { and, count, desc, eq, isNull } from 'drizzle-orm';
import { openSecret, sealSecret } from '../certificates/vault.ts';
import type { AppContext } from '../context.ts';
import { webhookDeliveries, webhookEndpoints } from '../db/schema.ts';
import { checkWebhookUrl, type HostResolver } from './address-guard.ts';
import { isValidStandardSecret } from './signing.ts';

/**
 * Webhook endpoints of a project (spec 2.10, 4.5). Secrets are sealed at rest with the service master key
 * (AES-256-GCM, like certificates) and never returned after creation; a rotation keeps the previous
 * secret signing too for 24 hours.
 */

export type EndpointRow = typeof webhookEndpoints.$inferSelect;

/** How long the previous secret keeps signing after a rotation. */
export const SECRET_ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export interface EndpointInput {
  url: string;
  events: string[];
  secret?: string | null;
  active?: boolean;
  description?: string | null;
}

export type EndpointPatch = Partial<EndpointInput>;

/** A refused input: the field and why (the route turns it into a 400 naming the field). */
export interface EndpointInputError {
  code: 'VALIDATION_FAILED' | 'WEBHOOK_URL_REFUSED';
  field: string;
  message: string;
}

export type EndpointResult<T> = { ok: true; value: T } | { ok: false; error: EndpointInputError };

const seal = (ctx: AppContext, secret: string) =>
  sealSecret(Buffer.from(secret, 'utf8'), ctx.config.masterKey).toString('base64');
const open = (ctx: AppContext, sealed: string) =>
  openSecret(Buffer.from(sealed, 'base64'), ctx.config.masterKey).toString('utf8');

/** The secrets that sign an attempt made at `now`: the current one and a previous one still in its grace. */
export function endpointSecrets(
  ctx: AppContext,
  row: EndpointRow,
  now: Date,
): { current: string | null; previous: string | null } {
  if (!row.secret) return { current: null, previous: null };
  const previous =
    row.previousSecret && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now
      ? open(ctx, row.previousSecret)
      : null;
  return { current: open(ctx, row.secret), previous };
}

async function checkUrl(ctx: AppContext, url: string, resolve?: HostResolver): Promise<EndpointResult<string>> {
  const checked = await checkWebhookUrl(url, ctx.config.webhooksAllowInsecure, resolve);
  if (checked.ok) return { ok: true, value: checked.value.toString() };
  // the SSRF guard has its own code; malformed URLs and plain http are ordinary validation failures
  const code = checked.error.startsWith('must reach') ? 'WEBHOOK_URL_REFUSED' : 'VALIDATION_FAILED';
  return { ok: false, error: { code, field: 'url', message: checked.error } };
}

function checkSecret(secret: string | null | undefined): EndpointResult<string | null> {
  if (secret === undefined || secret === null || secret === '') return { ok: true, value: null };
  if (!isValidStandardSecret(secret)) {
    return {
      ok: false,
      error: {
        code: 'VALIDATION_FAILED',
        field: 'secret',
        message: 'a secret starting with whsec_ must be followed by the base64 of 16 to 64 bytes',
      },
    };
  }
  return { ok: true, value: secret };
}

/** Events are stored in the order of spec section 6, without duplicates. */
const normalizeEvents = (list: string[]) => [...new Set(list)];

export async function createEndpoint(
  ctx: AppContext,
  projectId: string,
  input: EndpointInput,
  options: { resolve?: HostResolver } = {},
): Promise<EndpointResult<{ row: EndpointRow; secret: string | null }>> {
  const url = await checkUrl(ctx, input.url, options.resolve);
  if (!url.ok) return url;
  const secret = checkSecret(input.secret);
  if (!secret.ok) return secret;
  const now = ctx.now();
  const [row] = await ctx.db
    .insert(webhookEndpoints)
    .values({
      projectId,
      url: url.value,
      description: input.description ?? null,
      events: normalizeEvents(input.events),
      secret: secret.value ? seal(ctx, secret.value) : null,
      active: input.active ?? true,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  return { ok: true, value: { row: row!, secret: secret.value } };
}

/** A live (not deleted) endpoint of the project; null for any other id. */
export async function findEndpoint(ctx: AppContext, projectId: string, id: string): Promise<EndpointRow | null> {
  const [row] = await ctx.db
    .select()
    .from(webhookEndpoints)
    .where(
      and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.projectId, projectId), isNull(webhookEndpoints.deletedAt)),
    )
    .limit(1);
  return row ?? null;
}

export async function listEndpoints(
  ctx: AppContext,
  projectId: string,
  page: { page: number; limit: number },
): Promise<{ rows: EndpointRow[]; total: number }> {
  const where = and(eq(webhookEndpoints.projectId, projectId), isNull(webhookEndpoints.deletedAt));
  const rows = await ctx.db
    .select()
    .from(webhookEndpoints)
    .where(where)
    .orderBy(desc(webhookEndpoints.createdAt), desc(webhookEndpoints.id))
    .limit(page.limit)
    .offset((page.page - 1) * page.limit);
  const [total] = await ctx.db.select({ n: count() }).from(webhookEndpoints).where(where);
  return { rows, total: total?.n ?? 0 };
}

/**
 * Applies a PATCH. A new secret rotates: the previous one keeps signing (Standard Webhooks signatures) for 24
 * hours; `null` or `""` removes signing at once (both secrets).
 */
export async function updateEndpoint(
  ctx: AppContext,
  row: EndpointRow,
  patch: EndpointPatch,
  options: { resolve?: HostResolver } = {},
): Promise<EndpointResult<EndpointRow>> {
  const now = ctx.now();
  const changes: Partial<typeof webhookEndpoints.$inferInsert> = { updatedAt: now };
  if (patch.url !== undefined) {
    const url = await checkUrl(ctx, patch.url, options.resolve);
    if (!url.ok) return url;
    changes.url = url.value;
  }
  if (patch.events !== undefined) changes.events = normalizeEvents(patch.events);
  if (patch.active !== undefined) changes.active = patch.active;
  if (patch.description !== undefined) changes.description = patch.description;
  if (patch.secret !== undefined) {
    const secret = checkSecret(patch.secret);
    if (!secret.ok) return secret;
    const current = row.secret ? open(ctx, row.secret) : null;
    if (secret.value === null) {
      Object.assign(changes, { secret: null, previousSecret: null, previousSecretExpiresAt: null });
    } else if (secret.value !== current) {
      Object.assign(changes, {
        secret: seal(ctx, secret.value),
        previousSecret: row.secret,
        previousSecretExpiresAt: row.secret ? new Date(now.getTime() + SECRET_ROTATION_GRACE_MS) : null,
      });
    }
  }
  const [updated] = await ctx.db
    .update(webhookEndpoints)
    .set(changes)
    .where(and(eq(webhookEndpoints.id, row.id), isNull(webhookEndpoints.deletedAt)))
    .returning();
  if (!updated) return { ok: false, error: { code: 'VALIDATION_FAILED', field: 'id', message: 'was deleted' } };
  return { ok: true, value: updated };
}

/**
 * Deletes an endpoint (kept as a tombstone so its delivery history stays readable); its pending deliveries
 * end `failed` in the same transaction. False when it does not exist (or is of another project).
 */
export async function deleteEndpoint(ctx: AppContext, projectId: string, id: string): Promise<boolean> {
  const now = ctx.now();
  return ctx.db.transaction(async (tx) => {
    const [row] = await tx
      .update(webhookEndpoints)
      .set({ deletedAt: now, active: false, secret: null, previousSecret: null, updatedAt: now })
      .where(
        and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.projectId, projectId), isNull(webhookEndpoints.deletedAt)),
      )
      .returning({ id: webhookEndpoints.id });
    if (!row) return false;
    await tx
      .update(webhookDeliveries)
      .set({ status: 'failed', nextAttemptAt: null, lastError: 'the endpoint was deleted', completedAt: now })
      .where(and(eq(webhookDeliveries.endpointId, id), eq(webhookDeliveries.status, 'pending')));
    return true;
  });
}

/** The masked hint of a secret: its last 4 characters when it is long enough to spare them. */
export function secretHint(ctx: AppContext, row: EndpointRow): string | null {
  if (!row.secret) return null;
  const secret = open(ctx, row.secret);
  return secret.length >= 16 ? `…${secret.slice(-4)}` : '…';
}
