import type { AbrasfSandboxProfile } from './profiles.ts';

/**
 * DSF ABRASF 2.03 (briefs/providers-abrasf.md §9; OpenAC DSF/2.03/nfse.xsd; ACBr and OpenAC clients): SOAP 1.1,
 * `<nfse:<Op>>` with the message inline (no cabecalho), messages in no namespace, answers inline in `<Op>Response`;
 * the range query is `ConsultarNfseFaixa`. RPS, lote and cancellation signed on `#Id`; every query signed at its
 * root (`URI=""`: the roots carry no Id).
 * Readings (strict): every query (ConsultarLoteRps included) must be signed by the prestador (E172 unsigned or
 * invalid, E157 someone else; the XSD makes the Signature optional, ACBr always signs); the TLS client certificate
 * is required (E182); a message in the ABRASF namespace is refused by the XSD (E160).
 */
export const DSF_PROFILE: AbrasfSandboxProfile = {
  provider: 'DSF',
  engine: 'abrasf-v2:dsf',
  slug: 'abrasf-dsf',
  family: 'abrasf-v2-dsf',
  version: '2.03',
  schema: 'abrasf203Dsf',
  dataNamespace: null,
  soap: { namespace: 'http://nfse.abrasf.org.br', operationCase: 'pascal' },
  request: 'inline',
  response: 'inline',
  operations: [
    'RecepcionarLoteRps',
    'RecepcionarLoteRpsSincrono',
    'GerarNfse',
    'ConsultarLoteRps',
    'ConsultarNfseFaixa',
    'ConsultarNfsePorRps',
    'ConsultarNfseServicoPrestado',
    'ConsultarNfseServicoTomado',
    'CancelarNfse',
    'SubstituirNfse',
  ],
  operationNames: { ConsultarNfseFaixa: 'ConsultarNfsePorFaixa' },
  signature: { rps: true, lote: true, cancel: true, queries: true, pollQuery: true },
  clientCertificate: true,
  bodyCredentials: false,
  limits: { queryPage: 50, rpsPerLote: 50 },
};
