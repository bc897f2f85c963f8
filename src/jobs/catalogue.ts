/**
 * The typed job catalogue: every background job, its payload and its retry policy, as data.
 * Handlers are idempotent (each side effect is a recorded step), so a retried or recovered job
 * continues or reconciles instead of repeating what was done.
 */
export interface JobPayloads {
  /** Build, sign, send a document to the government and record the outcome. */
  'invoice.issue': { invoiceId: string };
  /** Ask for the result of the protocol under which the government holds an invoice (asynchronous families). */
  'invoice.poll': { invoiceId: string; poll: number };
  /** Send a cancellation event for an issued invoice. */
  'invoice.cancel': { invoiceId: string };
  /** Store the XML and PDF of an invoice and publish their URLs. */
  'invoice.documents': { invoiceId: string; kind: 'emission' | 'cancellation' };
  /** Fan an outbox event out to the project's webhook endpoints. */
  'events.dispatch': { eventId: string };
  /** One attempt of a webhook delivery. */
  'webhook.deliver': { deliveryId: string };
  /** One check of a white-label domain's CNAME (reschedules itself while pending; `check` counts them). */
  'domain.verify': { orgId: string; storageBaseUrl: string; check: number };
}

export type JobName = keyof JobPayloads;

/**
 * What happens to a job's subject when the job throws on its last allowed attempt (a database blip, a
 * builder bug): the subject is moved to a terminal, visible state and the event is written, so nothing
 * stays `processing` forever. Declared here beside the retry policy; carried out by `wiring/exhausted.ts`.
 */
export type ExhaustedStep =
  /** the invoice ends in `error` with `code`, `nfse.error` is written and its batch may complete */
  | { action: 'fail-invoice'; code: string }
  /** the invoice stays issued; `cancellation.status` becomes `failed` with `code` (it may be asked again) */
  | { action: 'fail-cancellation'; code: string }
  /** the invoice stays issued; its `documentStatus` becomes `failed` with `code` (the on-the-fly routes still serve it) */
  | { action: 'fail-documents'; code: string }
  /** the white-label domain's verification ends `failed` with `code` and the reason */
  | { action: 'fail-domain-verification'; code: string }
  /** nothing to end: the subject records its own state (`reason` says where) */
  | { action: 'none'; reason: string };

export interface JobPolicy {
  /** attempts after the first */
  retryLimit: number;
  retryDelaySeconds: number;
  retryBackoff: boolean;
  retryDelayMaxSeconds?: number;
  /** a job active longer than this is failed and retried under the policy */
  expireInSeconds: number;
  /** the worker refreshes a heartbeat while it runs; a job whose worker died (kill -9) is retried after this */
  heartbeatSeconds?: number;
  /** the step run once the job has run out of attempts, thrown or expired (from its dead-letter queue) */
  onExhausted: ExhaustedStep;
}

const INTERNAL = 'INTERNAL_PROCESSING_FAILED';

export const JOB_POLICIES: Record<JobName, JobPolicy> = {
  'invoice.issue': {
    retryLimit: 10,
    retryDelaySeconds: 2,
    retryBackoff: true,
    retryDelayMaxSeconds: 300,
    expireInSeconds: 120,
    heartbeatSeconds: 10,
    onExhausted: { action: 'fail-invoice', code: INTERNAL },
  },
  // the schedule of the polls is the job's own (issue-job.ts); these retries are for queries that failed
  'invoice.poll': {
    retryLimit: 10,
    retryDelaySeconds: 5,
    retryBackoff: true,
    retryDelayMaxSeconds: 600,
    expireInSeconds: 120,
    heartbeatSeconds: 10,
    onExhausted: { action: 'fail-invoice', code: 'PROTOCOL_QUERY_FAILED' },
  },
  'invoice.cancel': {
    retryLimit: 10,
    retryDelaySeconds: 2,
    retryBackoff: true,
    retryDelayMaxSeconds: 300,
    expireInSeconds: 120,
    heartbeatSeconds: 10,
    onExhausted: { action: 'fail-cancellation', code: INTERNAL },
  },
  'invoice.documents': {
    retryLimit: 6,
    retryDelaySeconds: 5,
    retryBackoff: true,
    retryDelayMaxSeconds: 120,
    expireInSeconds: 120,
    onExhausted: { action: 'fail-documents', code: INTERNAL },
  },
  'events.dispatch': {
    retryLimit: 20,
    retryDelaySeconds: 1,
    retryBackoff: true,
    expireInSeconds: 60,
    onExhausted: { action: 'none', reason: 'the outbox event stays undispatched and is logged' },
  },
  // webhook attempts are scheduled by the delivery itself (0, 1, 5, 30, 120 min); the job only retries
  // when the worker crashed mid-attempt
  'webhook.deliver': {
    retryLimit: 3,
    retryDelaySeconds: 5,
    retryBackoff: false,
    expireInSeconds: 60,
    onExhausted: { action: 'none', reason: 'the delivery keeps its own schedule (next_attempt_at) and history' },
  },
  // a thrown check is a DNS server that cannot be queried; a wrong or missing CNAME is an answer, rescheduled by
  // the job itself (NFSE_DOMAIN_VERIFICATION_RETRY_SECONDS)
  'domain.verify': {
    retryLimit: 5,
    retryDelaySeconds: 5,
    retryBackoff: true,
    retryDelayMaxSeconds: 600,
    expireInSeconds: 60,
    onExhausted: { action: 'fail-domain-verification', code: 'DNS_UNAVAILABLE' },
  },
};

export const JOB_NAMES = Object.keys(JOB_POLICIES) as JobName[];
