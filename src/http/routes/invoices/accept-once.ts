import type { FastifyReply } from 'fastify';
import type { Acceptance, InvoiceIntake } from '../../../invoices/intake.ts';
import { ApiError } from '../../errors.ts';

/**
 * The end of POST /emitir and /emitir/batch: commits the acceptance and answers its 202. With an
 * `Idempotency-Key` the key commits in the same transaction: the same key and body replay the first 202
 * (`idempotent-replayed: true`), another body is 409 IDEMPOTENCY_KEY_REUSED. Credits the plan cannot cover are the
 * route's 402 (`creditsExhausted`).
 */
export async function acceptOnce(
  intake: InvoiceIntake,
  reply: FastifyReply,
  acceptance: Acceptance,
  body: object,
  idempotency: { key: string; bodyHash: string } | null,
  creditsExhausted: () => ApiError,
) {
  if (idempotency) {
    const result = await intake.acceptIdempotent(acceptance, idempotency.key, idempotency.bodyHash, {
      status: 202,
      body,
    });
    if (result.kind === 'mismatch') {
      throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different body', [
        { field: 'headers.idempotency-key', message: 'was used with a different body' },
      ]);
    }
    if (result.kind === 'replay') {
      return reply
        .status(result.status as 202)
        .header('idempotent-replayed', 'true')
        .send(result.body as never);
    }
    if (result.kind === 'refused') throw creditsExhausted();
    return reply.status(202).send(body);
  }
  const result = await intake.accept(acceptance);
  if (!result.ok) throw creditsExhausted();
  return reply.status(202).send(body);
}
