/**
 * @nfse/client: the typed TypeScript client of the NFS-e service API and the webhook verification helpers.
 *
 *   const client = new NfseClient({ baseUrl: 'http://127.0.0.1:3000', projectKey: 'svc_…' });
 *   const res = await client.issueInvoice({ body: { tomador, servico, valores } });
 *   if (res.ok) console.log(res.data.invoiceId); else console.error(res.status, res.data.code);
 */
export * from './generated.ts';
export {
  ApiProblemError,
  type Auth,
  type CallOptions,
  type ClientOptions,
  expectOk,
  type Failure,
  type FileInput,
  type OperationSpec,
  type Redirect,
  type Success,
  UnexpectedStatusError,
} from './runtime.ts';
export * from './webhooks.ts';
