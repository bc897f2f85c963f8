import type { NormalizedInvoice } from '../../../domain/invoice-request.ts';
import type { ProjectFiscalProfile } from '../../../domain/project-profile.ts';
import { escapeXmlText } from '../../../xml/escape.ts';
import type { SendContext } from '../../kit/family.ts';
import type { AbrasfOperation, AbrasfProviderConfig } from '../config.ts';

/**
 * Desenvolve (nfsd; 4 cities in PA at `https://<city>.desenvolvecidade.com.br/nfsd/IntegracaoNfsd`, homologation
 * `https://hml-01-<city>.desenvolvecidade.com.br/…`: the registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr
 * creates TACBrNFSeProviderDesenvolve203). Public facts (ACBr `Desenvolve.Provider.pas`,
 * TACBrNFSeXWebserviceDesenvolve203 / TACBrNFSeProviderDesenvolve203; `Desenvolve.GravarXml.pas`):
 * - SOAP 1.1, SOAPAction ""; the operation element is the message root in camel case in
 *   `http://ws.integracao.nfsd.desenvolve/` (`<tns:gerarNfseEnvio>`, `enviarLoteRpsEnvio`,
 *   `enviarLoteRpsSincronoEnvio`, `consultarLoteRpsEnvio`, `consultarNfseRpsEnvio`, `cancelarNfseEnvio`), holding the
 *   message as the one unqualified escaped string `<xml>`; no cabecalho; answers in `return`;
 * - ABRASF 2.03 (`versao`/`versaoDados` 2.03) in `http://www.abrasf.org.br/nfse.xsd`; signed: the RPS (also in
 *   GerarNfse), the lote, ConsultarLoteRps, ConsultarNfseRps and the cancellation; no client certificate on TLS
 *   (UseCertificateHTTP False); no range query, no substitution (ServicosDisponibilizados);
 * - the writer always sends Aliquota (2 decimals) and CodigoCnae.
 * Readings: the official nfse_v203.xsd with an optional Signature in the two signed queries (schemas/README.md:
 * nfse_v203-desenvolve.xsd, derived); the queries signed at their root (`URI=""`, Signature last, as DSF's) since
 * their roots carry no Id; GerarNfse synchronous; a CNAE is required (the project's or the invoice's, 7 digits).
 */
const NS = 'http://ws.integracao.nfsd.desenvolve/';

/** `<tns:<root in camel case>><xml>…</xml>` around the (signed) message, escaped. */
function desenvolveMessage(_operation: AbrasfOperation, xml: string, context: SendContext | null): string {
  if (!context) return xml;
  const root = /^\s*(?:<\?xml[^>]*\?>)?\s*<(\w+)/.exec(xml)?.[1] ?? '';
  const op = root.charAt(0).toLowerCase() + root.slice(1);
  return `<tns:${op} xmlns:tns="${NS}"><xml>${escapeXmlText(xml)}</xml></tns:${op}>`;
}

function desenvolveCheck(
  project: ProjectFiscalProfile,
  invoice: NormalizedInvoice,
): { field: string; message: string }[] {
  const cnae = (invoice.servico.cnae ?? project.cnae ?? '').replace(/\D/g, '');
  return cnae.length >= 7
    ? []
    : [{ field: 'servico.cnae', message: 'required by Desenvolve (CodigoCnae, 7 digits): or set the project CNAE' }];
}

export const DESENVOLVE_CONFIG: AbrasfProviderConfig = {
  provider: 'Desenvolve',
  version: '2.03',
  schema: 'abrasf203Desenvolve',
  sources:
    'ACBr Desenvolve.Provider.pas (TACBrNFSeProviderDesenvolve203), Desenvolve.GravarXml.pas; nfse_v203.xsd (+ signed queries)',
  soap: { version: '1.1', namespace: NS, operationCase: 'camel', soapAction: '' },
  body: { style: 'bareMessage', encoding: 'raw', cabecalho: false, credentials: false },
  dataNamespace: 'http://www.abrasf.org.br/nfse.xsd',
  auth: 'signature',
  signature: { rps: true, lote: true, cancel: true, queries: true, pollQuery: true },
  formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\n' },
  emission: 'emitSingle',
  limits: { rpsPerLote: 50, queryPage: 50 },
  cancellation: { defaultCode: '1' },
  operations: { queryRange: { supported: false }, replace: { supported: false } },
  check: desenvolveCheck,
  hooks: { message: desenvolveMessage },
  capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};
