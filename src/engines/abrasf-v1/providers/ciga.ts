import type { FamilyDefinition, OperationRequest } from '../../kit/family.ts';
import { ACBR_V1_IDS, type AbrasfV1ProviderConfig } from '../config.ts';
import { defineAbrasfV1Provider } from '../define.ts';
import { buildLote } from '../messages.ts';

/**
 * CIGA (Santa Catarina; São Cristóvão do Sul/SC here, `https://nfse.ciga.sc.gov.br/
 * webservice/v1`, training `https://nfse-testes.ciga.sc.gov.br/webservice/v1`: the registry). Sources: ACBr
 * CIGA.Provider.pas (edsontmarques/ACBr, `Fontes/ACBrDFe/ACBrNFSeX/Provedores/CIGA/`); the provider's nfse.xsd as
 * ACBr ships it (frones/ACBr 5bfe8fa4 `Exemplos/ACBrDFe/Schemas/NFSe/CIGA/1.00/nfse.xsd`, copied to
 * schemas/abrasf-v1/ciga/).
 * - SOAP 1.1, the operation element `<{Op}Request>` (RecepcionarLoteRps, ConsultarSituacaoLoteRps, ConsultarLoteRps,
 *   ConsultarNfseRps, ConsultarNfse, CancelarNfse) in `http://nfse.abrasf.org.br`, unqualified `nfseCabecMsg` (the
 *   ABRASF 1.00 cabeçalho without namespace: GetCabecalho('')) and `nfseDadosMsg` (the message in CDATA); SOAPAction
 *   `http://nfse.abrasf.org.br/<Op>` (ConsultarNfsePorRps for the RPS query); the answer in `outputXML`.
 * - messages: Belo Horizonte's ABRASF 1.00 schema (`http://www.abrasf.org.br/nfse.xsd`, `Id` attributes,
 *   LoteRps@versao 1.00 required: AtribVerLote `versao`); the cancellation confirmed as
 *   RetCancelamento{NfseCancelamento{Confirmacao{Pedido, DataHoraCancelamento}}} (ACBr reads both shapes).
 * - nothing signed (CIGA sets no ConfigAssinar); client certificate on TLS (ACBr's default; the registry's `mtls`).
 * Conservative readings: the cabeçalho is sent escaped where ACBr writes CDATA (the same string once parsed); the
 * ABRASF 1.00 defaults of the generic base for the RPS (ItemListaServico `01.01`, Aliquota a fraction); RPS id
 * `rps<number>`, lote id `Lote_<number>`; CodigoCancelamento 1/2/4.
 */
const SERVICE_NS = 'http://nfse.abrasf.org.br';
const op = (element: string, action: string) => ({
  element: `${element}Request`,
  soapAction: `${SERVICE_NS}/${action}`,
  parameter: 'nfseDadosMsg',
});

export const CIGA_CONFIG: AbrasfV1ProviderConfig = {
  provider: 'CIGA',
  sources: 'ACBr CIGA.Provider.pas; CIGA nfse.xsd (ACBr copy)',
  schema: 'abrasf100CIGA',
  dataNamespace: 'http://www.abrasf.org.br/nfse.xsd',
  soap: {
    namespace: SERVICE_NS,
    encoding: 'cdata',
    qualifiedParameters: false,
    header: {
      parameter: 'nfseCabecMsg',
      cabecalho: '<cabecalho versao="1.00"><versaoDados>1.00</versaoDados></cabecalho>',
    },
    operations: {
      recepcionar: op('RecepcionarLoteRps', 'RecepcionarLoteRps'),
      consultarSituacao: op('ConsultarSituacaoLoteRps', 'ConsultarSituacaoLoteRps'),
      consultarLote: op('ConsultarLoteRps', 'ConsultarLoteRps'),
      consultarPorRps: op('ConsultarNfseRps', 'ConsultarNfsePorRps'),
      consultarNfse: op('ConsultarNfse', 'ConsultarNfse'),
      cancelar: op('CancelarNfse', 'CancelarNfse'),
    },
  },
  idAttribute: 'Id',
  ids: ACBR_V1_IDS,
  signature: { rps: false, lote: false, queries: false, cancel: false },
  formats: { itemListaServico: 'dotted', lineBreak: ' ' },
  auth: 'mtls',
  capabilities: { cancel: true, substitution: false, batch: false, pdf: 'none', homologation: true },
};

/** The lote with its required `versao` (unsigned, so it is added to the built lote; CDATA keeps it literal). */
const withVersao = (lote: string) => lote.replace(/<LoteRps /, '<LoteRps versao="1.00" ');

const base = defineAbrasfV1Provider(CIGA_CONFIG);
const emit = base.operations.emit as Extract<typeof base.operations.emit, { parse: unknown }>;

export const cigaFamily: FamilyDefinition = {
  ...base,
  declaration: { ...base.declaration, schemaView: (signed) => withVersao(buildLote(CIGA_CONFIG, signed)) },
  operations: {
    ...base.operations,
    emit: {
      request: (document, context): OperationRequest => {
        const request = emit.request(document, context);
        return { ...request, body: withVersao(request.body ?? '') };
      },
      parse: emit.parse,
    },
  },
};
