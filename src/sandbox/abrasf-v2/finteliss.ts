import type { MunicipalSandbox } from '../municipal.ts';
import { baselineProfile } from './baseline.ts';
import { withFaixaQuery, type AbrasfSandboxProfile } from './profiles.ts';
import { createAbrasfService } from './service.ts';

const WEB = 'http://www.fintel.com.br/WebService';

/**
 * fintelISS, Juiz de Fora's layout (ACBr fintelISS.Provider.pas, TACBrNFSeXWebservicefintelISS200; the city's
 * nfseV202.xsd as ACBr ships it): an ASMX service, `<web:<Op>>{web:cabecalho, web:xml}` in
 * `http://www.fintel.com.br/WebService` (only that wrapper and those names are read), the SOAPAction
 * `http://www.fintel.com.br/WebService/<Op>` (a SOAP Client fault otherwise), answers as the `<Op>Result` string;
 * the range query `ConsultarNfseFaixa`; RPS, lote and cancellation signatures verified; the client certificate
 * required (E182); the official cabecalho's versaoDados checked (E183).
 */
export const FINTELISS_PROFILE: AbrasfSandboxProfile = {
  ...baselineProfile({ provider: 'fintelISS', version: '2.02', schema: 'abrasf202FintelISS' }),
  soap: { namespace: WEB, operationCase: 'pascal' },
  stringsWrapper: 'operation',
  stringNames: { cabecalho: 'cabecalho', dados: 'xml' },
  response: 'result',
  ...withFaixaQuery(),
  soapActionByEnvironment: { production: `${WEB}/`, homologation: `${WEB}/` },
};

export const fintelissSandbox: MunicipalSandbox = {
  engine: FINTELISS_PROFILE.engine,
  slug: FINTELISS_PROFILE.slug,
  create: (deps) => createAbrasfService(FINTELISS_PROFILE, deps),
};
