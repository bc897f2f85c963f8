import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Saatri (ADM Sistemas' SAATRI; 40 cities in BA at `https://<city>.saatri.com.br/servicos/nfse.svc`, homologation
 * `https://homologa-<city>.saatri.com.br/servicos/nfse.svc`: the registry, from ACBr's ACBrNFSeXServicos.ini).
 * Facts from two public clients:
 * - ACBr Saatri.Provider.pas / Saatri.GravarXml.pas (TACBrNFSeProviderSaatri203, edsontmarques/ACBr mirror): the
 *   official message set as `<Op>Request{nfseCabecMsg, nfseDadosMsg}` in `http://nfse.abrasf.org.br` (escaped
 *   strings), SOAP 1.1, SOAPAction `http://nfse.abrasf.org.br/Infse/<Op>`, answers in `outputXML`; a WS-Security
 *   header `wsse:Security/UsernameToken` (PasswordText) with the taxpayer's web-service user and password
 *   (`RequerLogin`); no client certificate on TLS (`UseCertificateHTTP := False`); RPS, lote and cancellation
 *   signed (ConfigAssinar); layout 2.03 (VersaoDados 2.03).
 * - the CONMAC system's manual and SAATRI client (kauasantossacramento/conmac_novo `MANUAL_SISTEMA.md`,
 *   `despesas/saatri/xml_builder.py`), tested in production in Oliveira dos Brejinhos/BA (2026-08): the same header
 *   and wrapper (CDATA strings); a SOAPAction without `/Infse/` is refused by the WCF service (ActionNotSupported);
 *   the official ABRASF 2.03 XSD; GerarNfse answered in `outputXML`.
 * Readings (§13 unknowns): the official nfse_v203.xsd; GerarNfse synchronous (what the production client uses);
 * signatures as ACBr sends them (the production client sent GerarNfse unsigned and was accepted, so the server
 * does not seem to require them: signing is the conservative side); the user/password are the project's
 * municipalUser/municipalPassword; Aliquota as a percentage, ItemListaServico `01.05`. Not modelled: the code `0`
 * message with which a city on the national environment acknowledges a DPS whose note comes minutes later (the
 * production notes): it is read as a rejection, then the note is found by the RPS query on a retry.
 */
const base = baselineConfig({
  provider: 'Saatri',
  version: '2.03',
  schema: 'abrasf203',
  sources:
    'ACBr Saatri.Provider.pas + Saatri.GravarXml.pas (TACBrNFSeProviderSaatri203); conmac_novo MANUAL_SISTEMA.md + despesas/saatri/xml_builder.py; ABRASF nfse_v203.xsd',
});

export const SAATRI_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: { ...base.soap, soapAction: 'http://nfse.abrasf.org.br/Infse/{op}', security: 'usernameToken' },
  auth: 'body-credentials',
};
