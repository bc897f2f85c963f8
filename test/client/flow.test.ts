import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectOk,
  type GetInvoiceStatusResult,
  NfseClient,
  verifyStandardWebhook,
  verifySvcSignature,
  verifyWebhook,
  WebhookVerificationError,
} from '../../packages/client/src/index.ts';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, PROVIDER_CNPJ } from '../support/onboarding.ts';
import { type Receiver, startReceiver, waitFor } from '../webhooks/support.ts';

/**
 * The onboarding and issuing flow of spec 5.8 through the generated client only (packages/client): the operator
 * creates an organization, the organization token a project, its A1 certificate and a project key; the key
 * registers a webhook endpoint on a local receiver (development setting on), issues, polls, downloads the XML
 * and the PDF, cancels; the receiver's deliveries are checked with the client's verification helpers.
 */

let t: TestService;
let receiver: Receiver;
beforeAll(async () => {
  t = await startTestService({ NFSE_WEBHOOKS_ALLOW_INSECURE: 'true' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

/** Polls the status through the client until `done` holds (the service answers long before the timeout). */
async function pollStatus(
  client: NfseClient,
  id: string,
  done: (s: GetInvoiceStatusResult) => boolean,
): Promise<GetInvoiceStatusResult> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const status = expectOk(await client.getInvoiceStatus({ path: { id } })).data;
    if (done(status)) return status;
    if (Date.now() > deadline) throw new Error(`invoice ${id} still ${status.status}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

interface ObjectSchema {
  required: string[];
  properties: Record<string, ObjectSchema>;
}
const openapi = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8')) as {
  webhooks: Record<string, { post: { requestBody: { content: { 'application/json': { schema: ObjectSchema } } } } }>;
};

/** A delivered envelope has the fields the document's `webhooks` section describes for its event, no others. */
function expectDocumentedEnvelope(envelope: { event: string; data: object }) {
  const schema = openapi.webhooks[envelope.event]?.post.requestBody.content['application/json'].schema;
  expect(schema, `the document describes ${envelope.event}`).toBeDefined();
  expect(Object.keys(envelope).sort()).toEqual([...schema!.required].sort());
  const data = schema!.properties.data!;
  expect(Object.keys(data.properties)).toEqual(expect.arrayContaining(Object.keys(envelope.data)));
  expect(Object.keys(envelope.data)).toEqual(expect.arrayContaining(data.required));
}

/** A document route: the stored bytes (200) or the public URL it redirects to (302), fetched like a browser. */
async function documentBytes(res: { status: number; data: unknown; location?: string }): Promise<Buffer> {
  if (res.status === 302) {
    const followed = await fetch(res.location!);
    expect(followed.status).toBe(200);
    return Buffer.from(await followed.arrayBuffer());
  }
  expect(res.status).toBe(200);
  return typeof res.data === 'string' ? Buffer.from(res.data, 'utf8') : Buffer.from(res.data as Uint8Array);
}

describe('the typed client', () => {
  it('onboards, issues, downloads, cancels and verifies the webhook deliveries', async () => {
    const operator = new NfseClient({ baseUrl: t.baseUrl, operatorKey: t.adminKey });
    const health = await operator.health();
    expect(health).toMatchObject({ ok: true, status: 200, data: { status: 'ok' } });

    // the operator creates the organization; a missing key is a typed problem+json failure
    const refused = await new NfseClient({ baseUrl: t.baseUrl }).createOrganization({ body: { name: 'Sem chave' } });
    expect(refused.ok).toBe(false);
    if (refused.status !== 401) throw new Error(`expected 401, got ${refused.status}`);
    expect(refused.data.code).toMatch(/^[A-Z_]+$/);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');

    const org = expectOk(await operator.createOrganization({ body: { name: 'Cliente do SDK', plan: 'pro' } })).data;
    expect(org.token).toMatch(/^svc_org_/);
    expectOk(await operator.updateOrgLimits({ path: { id: org.id }, body: { keyRateLimitCeiling: 100_000 } }));

    // the organization token: project, certificate, project key
    const orgClient = new NfseClient({ baseUrl: t.baseUrl, organizationToken: org.token });
    const project = expectOk(
      await orgClient.createProject({
        body: {
          name: 'Empresa Exemplo',
          cnpj: PROVIDER_CNPJ,
          razaoSocial: 'EMPRESA EXEMPLO LTDA',
          inscricaoMunicipal: '12345',
          regimeTributario: '1',
          codigoMunicipio: '2611606', // Recife: national environment
          email: 'fiscal@exemplo.com.br',
          endereco: {
            logradouro: 'Rua das Flores',
            numero: '100',
            bairro: 'Centro',
            cidade: 'Recife',
            uf: 'PE',
            cep: '50030230',
          },
          codigoTributacao: '010101',
          ambiente: 2,
          defaultNbs: '115021000',
          defaultIndicadorOperacao: '100301',
          defaultClassificacaoTributaria: '000001',
          defaultCstIbscbs: '000',
        },
      }),
    ).data;
    const a1 = createA1Certificate({ cnpj: PROVIDER_CNPJ, name: 'EMPRESA EXEMPLO LTDA', password: 'segredo-123' });
    const wrongPassword = await orgClient.uploadCertificate({
      path: { id: project.id },
      body: { file: { data: a1.pfx, filename: 'empresa.pfx' }, password: 'errada' },
    });
    expect(wrongPassword.ok).toBe(false);
    expect(wrongPassword.status).toBe(400);
    const certificate = await orgClient.uploadCertificate({
      path: { id: project.id },
      body: {
        file: { data: a1.pfx, filename: 'empresa.pfx', contentType: 'application/x-pkcs12' },
        password: a1.password,
      },
    });
    expect(certificate.status, JSON.stringify(certificate.data)).toBe(201);
    const key = expectOk(
      await orgClient.createApiKey({ path: { id: project.id }, body: { name: 'sdk', rateLimitPerMinute: 100_000 } }),
    ).data;
    expect(key.key).toMatch(/^svc_/);

    // the project key: a webhook endpoint on a local receiver, then issue
    const client = new NfseClient({ baseUrl: t.baseUrl, projectKey: key.key });
    const secret = 'segredo-do-receptor-sdk-0001';
    const endpoint = expectOk(
      await client.createWebhookEndpoint({
        body: { url: `${receiver.url}/hooks`, events: ['nfse.issued', 'nfse.cancelled'], secret },
      }),
    ).data;
    expect(endpoint.signing).toBe(true);
    const test = expectOk(await client.testWebhookEndpoint({ path: { id: endpoint.id } })).data;
    expect(test).toMatchObject({ success: true, statusCode: 200 });
    const testCall = receiver.callsTo('/hooks').find((c) => c.headers['x-svc-event'] === 'webhook.test')!;
    const testEvent = verifyWebhook({ body: testCall.rawBody, headers: testCall.headers, secret, scheme: 'both' });
    expect(testEvent).toMatchObject({
      event: 'webhook.test',
      deliveryId: test.delivery.id,
      data: { endpointId: endpoint.id },
    });
    expectDocumentedEnvelope(testEvent);

    const issued = await client.issueInvoice({ body: invoiceBody(), headers: { 'idempotency-key': 'sdk-flow-1' } });
    if (issued.status !== 202) throw new Error(`issue: ${issued.status} ${JSON.stringify(issued.data)}`);
    const invoiceId = issued.data.invoiceId;
    expect(issued.data.pollUrl).toBe(`/api/v1/invoices/${invoiceId}/status`);
    const status = await pollStatus(client, invoiceId, (s) => !['queued', 'processing'].includes(s.status));
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.chNFSe).toMatch(/^\d{50}$/);

    // the documents: the NFS-e XML and the DANFSe, stored bytes or a redirect to the public copy
    const xml = (await documentBytes(await client.getInvoiceXml({ path: { id: invoiceId } }))).toString('utf8');
    expect(xml).toContain(status.chNFSe!);
    const pdf = await documentBytes(await client.getInvoicePdf({ path: { id: invoiceId } }));
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');

    // cancel, then poll until cancelled
    const cancelling = await client.cancelInvoice({ body: { invoiceId, motivo: 'Serviço não prestado' } });
    expect(cancelling.status, JSON.stringify(cancelling.data)).toBe(202);
    const cancelled = await pollStatus(client, invoiceId, (s) => s.status === 'cancelled');
    expect(cancelled.cancelledAt).toBeTruthy();
    const again = await client.cancelInvoice({ body: { invoiceId } });
    expect(again.ok).toBe(false);
    expect(again.status).toBe(409);

    // the deliveries the receiver got: both signature schemes verify with the helpers
    const issuedCall = await waitFor(
      () => receiver.callsTo('/hooks').find((c) => c.headers['x-svc-event'] === 'nfse.issued'),
      'the nfse.issued delivery',
    );
    const event = verifyWebhook({ body: issuedCall.rawBody, headers: issuedCall.headers, secret, scheme: 'both' });
    expect(event.event).toBe('nfse.issued');
    if (event.event !== 'nfse.issued') throw new Error('narrowing');
    expect(event.data).toMatchObject({ invoiceId, chNFSe: status.chNFSe });
    expectDocumentedEnvelope(event);
    expect(verifySvcSignature(issuedCall.rawBody, String(issuedCall.headers['x-svc-signature']), secret)).toBe(true);
    // a tampered body, another secret or a stale delivery are refused
    const otherId = invoiceId.replace(/.$/, (last) => (last === '0' ? '1' : '0'));
    const tampered = Buffer.from(issuedCall.rawBody.toString('utf8').replace(invoiceId, otherId));
    expect(tampered.equals(issuedCall.rawBody)).toBe(false);
    expect(() => verifyWebhook({ body: tampered, headers: issuedCall.headers, secret, scheme: 'svc' })).toThrow(
      WebhookVerificationError,
    );
    expect(() => verifyWebhook({ body: issuedCall.rawBody, headers: issuedCall.headers, secret: 'outro' })).toThrow(
      /no webhook-signature matches/,
    );
    const sentAt = Number(issuedCall.headers['webhook-timestamp']) * 1000;
    expect(() =>
      verifyStandardWebhook({ body: issuedCall.rawBody, headers: issuedCall.headers, secret, now: sentAt + 600_000 }),
    ).toThrow(/too old/);

    const cancelledCall = await waitFor(
      () => receiver.callsTo('/hooks').find((c) => c.headers['x-svc-event'] === 'nfse.cancelled'),
      'the nfse.cancelled delivery',
    );
    const cancelEvent = verifyWebhook({ body: cancelledCall.rawBody, headers: cancelledCall.headers, secret });
    expect(cancelEvent).toMatchObject({ event: 'nfse.cancelled', data: { invoiceId } });
    expectDocumentedEnvelope(cancelEvent);

    // the delivery history, through the client too
    const history = expectOk(await client.listWebhookDeliveries({ query: { endpointId: endpoint.id } })).data;
    expect(history.data.map((d) => d.event).sort()).toEqual(['nfse.cancelled', 'nfse.issued', 'webhook.test']);
  });
});
