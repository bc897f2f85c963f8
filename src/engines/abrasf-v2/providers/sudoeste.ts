import type { AbrasfProviderConfig } from '../config.ts';
import { baselineConfig } from './baseline.ts';

/**
 * Sudoeste (6 cities in BA at `http://nfse.<city>.ba.gov.br/webrun/webservices/NFEServices.jws`, production only: the
 * registry, from ACBr's ACBrNFSeXServicos.ini, where ACBr creates TACBrNFSeProviderSudoeste202). Public facts (ACBr
 * `Sudoeste.Provider.pas` and `Sudoeste.GravarXml.pas`, TACBrNFSeXWebserviceSudoeste202 / TACBrNFSeProviderSudoeste202
 * / TNFSeW_Sudoeste202, edsontmarques/ACBr mirror):
 * - an Axis (`.jws`) service: SOAP 1.1, SOAPAction "", the operation element `<def:<Op>>` in `http://DefaultNamespace`
 *   holding the two unqualified escaped strings `Nfsecabecmsg` and `Nfsedadosmsg`; the answer string is
 *   `<Op>Return`; the range query is `ConsultarNfsePorFaixa`;
 * - errors as `Erro` entries in ListaMensagemRetorno (or at the answer's root) with `Codigo`/`ErroID`,
 *   `Mensagem`/`ErroMensagem` and `Correcao`/`ErroSolucao` (its ProcessarMensagemErros);
 * - ABRASF 2.02 (VersaoDados 2.02, `versao` on LoteRps), the official cabecalho; ACBr's ABRASF v2 signatures (RPS,
 *   lote, cancellation); Aliquota divided by 100 (`DivAliq100`: a fraction, 2 decimals); no CodigoNbs;
 * - the cancellation request requires `MotivoCancelamento` after CodigoCancelamento (`CancPreencherMotivo`), a field
 *   the official nfse_v202.xsd has no place for, and no Sudoeste schema is public: cancellation is not offered.
 * Readings: the official nfse_v202.xsd for the other messages; GerarNfse synchronous; plain-http endpoints, so no
 * client certificate is relied on (auth `signature`); ItemListaServico `01.05` (ACBr's default formatting).
 */
const base = baselineConfig({
  provider: 'Sudoeste',
  version: '2.02',
  schema: 'abrasf202',
  sources: 'ACBr Sudoeste.Provider.pas + Sudoeste.GravarXml.pas (TACBrNFSeProviderSudoeste202); ABRASF nfse_v202.xsd',
});

export const SUDOESTE_CONFIG: AbrasfProviderConfig = {
  ...base,
  soap: { version: '1.1', namespace: 'http://DefaultNamespace', operationCase: 'pascal', soapAction: '' },
  body: {
    ...base.body,
    style: 'opParams',
    stringNames: { cabecalho: 'Nfsecabecmsg', dados: 'Nfsedadosmsg' },
  },
  auth: 'signature',
  formats: { ...base.formats, aliquota: 'fraction' },
  answerMessages: {
    entries: ['Erro'],
    codigo: ['Codigo', 'ErroID'],
    mensagem: ['Mensagem', 'ErroMensagem'],
    correcao: ['Correcao', 'ErroSolucao'],
  },
  operations: { cancel: { supported: false } },
  capabilities: { ...base.capabilities, cancel: false },
};
