import { ABRASF_DATA_NS, type AbrasfSandboxProfile } from './profiles.ts';

/**
 * ISSNet ABRASF 2.04 (briefs/providers-abrasf.md §2; OpenAC ISSNet/2.04/nfse.xsd; ACBr and OpenAC clients, a DF
 * integrator's notes): ASP.NET asmx, SOAP 1.1, the operation element wraps `nfseCabecMsg`/`nfseDadosMsg` (raw child
 * XML as ACBr/OpenAC send, or an escaped/CDATA string as the DF integrator sends: all accepted), the answer escaped
 * in `<Op>Response/<Op>Result`. The query messages wrap their content in `Pedido`; the provider signs RPS, lote,
 * cancellation and those queries, with `Reference URI=""` (ACBr) or `#Id`: both verified.
 * Readings (strict): the operation element is the only wrapper accepted (`<Op>Request` is refused: not in any client);
 * the queries by RPS and by range must be signed by the prestador (ACBr signs them; the XSD makes the Signature
 * optional): E172 unsigned or invalid, E157 signed by someone else; the TLS client certificate is required (E182).
 */
export const ISSNET_PROFILE: AbrasfSandboxProfile = {
  provider: 'ISSNet',
  engine: 'abrasf-v2:issnet',
  slug: 'abrasf-issnet',
  family: 'abrasf-v2-issnet',
  version: '2.04',
  schema: 'abrasf204Issnet',
  dataNamespace: ABRASF_DATA_NS,
  soap: { namespace: 'http://nfse.abrasf.org.br', operationCase: 'pascal' },
  request: 'strings',
  stringsWrapper: 'operation',
  response: 'result',
  operations: [
    'RecepcionarLoteRps',
    'RecepcionarLoteRpsSincrono',
    'GerarNfse',
    'CancelarNfse',
    'SubstituirNfse',
    'ConsultarLoteRps',
    'ConsultarNfsePorRps',
    'ConsultarNfseServicoPrestado',
    'ConsultarNfseServicoTomado',
    'ConsultarNfsePorFaixa',
  ],
  signature: { rps: true, lote: true, cancel: true, queries: true, reference: 'document' },
  queryWrapper: 'Pedido',
  clientCertificate: true,
  bodyCredentials: false,
  limits: { queryPage: 50, rpsPerLote: 50 },
};
