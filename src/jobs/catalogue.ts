/**
 * The typed job catalogue: every background job, its payload and its retry policy, as data.
 * Handlers are idempotent (each side effect is a recorded step), so a retried or recovered job
 * continues or reconciles instead of repeating what was done.
 */
export interface JobPayloads {
  /** Build, sign, send a document to the government and record the outcome. */
  'invoice.issue': { invoiceId: string };
  /** Send a cancellation event for an issued invoice. */
  'invoice.cancel': { invoiceId: string };
  /** Store the XML and PDF of an invoice and publish their URLs. */
  'invoice.documents': { invoiceId: string; kind: 'emission' | 'cancellation' };
  /** Fan an outbox event out to the project's webhook endpoints. */
  'events.dispatch': { eventId: string };
  /** One attempt of a webhook delivery. */
  'webhook.deliver': { deliveryId: string };
}

export type JobName = keyof JobPayloads;

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
}

export const JOB_POLICIES: Record<JobName, JobPolicy> = {
  'invoice.issue': {
    retryLimit: 10,
    retryDelaySeconds: 2,
    retryBackoff: true,
    retryDelayMaxSeconds: 300,
    expireInSeconds: 120,
    heartbeatSeconds: 10,
  },
  'invoice.cancel': {
    retryLimit: 10,
    retryDelaySeconds: 2,
    retryBackoff: true,
    retryDelayMaxSeconds: 300,
    expireInSeconds: 120,
    heartbeatSeconds: 10,
  },
  'invoice.documents': {
    retryLimit: 6,
    retryDelaySeconds: 5,
    retryBackoff: true,
    retryDelayMaxSeconds: 120,
    expireInSeconds: 120,
  },
  'events.dispatch': { retryLimit: 20, retryDelaySeconds: 1, retryBackoff: true, expireInSeconds: 60 },
  // webhook attempts are scheduled by the delivery itself (0, 1, 5, 30, 120 min); the job only retries
  // when the worker crashed mid-attempt
  'webhook.deliver': { retryLimit: 3, retryDelaySeconds: 5, retryBackoff: false, expireInSeconds: 60 },
};

export const JOB_NAMES = Object.keys(JOB_POLICIES) as JobName[];
