import type { SchemaName } from '../../../xml/xsd.ts';
import type { AbrasfProviderConfig } from '../config.ts';

/**
 * The official ABRASF 2.0x baseline (briefs/providers-abrasf.md §0: nfse-v2_0x.wsdl, the nfse_v20x XSDs, MAN-2.01
 * §3.2): `<Op>Request{nfseCabecMsg, nfseDadosMsg}` in `http://nfse.abrasf.org.br` (unqualified strings, escaped),
 * SOAPAction `http://nfse.abrasf.org.br/<Op>`, `<Op>Response/outputXML`; data in
 * `http://www.abrasf.org.br/nfse.xsd`; RPS, lote and cancellation signed (RSA-SHA1, C14N 1.0); the client
 * certificate on TLS. A provider whose public facts show this message set is this configuration with its name,
 * version, schema and sources (the sources of each fact are cited in the provider's file).
 * Conservative readings shared by every baseline provider: GerarNfse (synchronous, one RPS) as the emission;
 * Aliquota as a percentage; ItemListaServico `01.05`; line breaks kept; cancellation code 1 by default.
 */
export function baselineConfig(options: {
  provider: string;
  version: AbrasfProviderConfig['version'];
  schema: SchemaName;
  sources: string;
}): AbrasfProviderConfig {
  return {
    ...options,
    soap: {
      version: '1.1',
      namespace: 'http://nfse.abrasf.org.br',
      operationCase: 'pascal',
      soapAction: 'http://nfse.abrasf.org.br/{op}',
    },
    body: { style: 'abrasfRequest', encoding: 'escaped', cabecalho: true, credentials: false },
    dataNamespace: 'http://www.abrasf.org.br/nfse.xsd',
    auth: 'mtls',
    signature: { rps: true, lote: true, cancel: true },
    formats: { aliquota: 'percentage', itemListaServico: 'dotted', lineBreak: '\n' },
    emission: 'emitSingle',
    limits: { rpsPerLote: 50, queryPage: 50 },
    cancellation: { defaultCode: '1' },
    capabilities: { cancel: true, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
  };
}
