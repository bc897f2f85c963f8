import { type AbrasfProviderConfig, notOffered } from '../config.ts';

/**
 * Centi (43 cities in GO, MT and TO; ABRASF 2.02 in its own namespace `http://www.centi.com.br/files/nfse.xsd`).
 * Sources, all public:
 * - ACBr `Centi.Provider.pas` (TACBrNFSeProviderCenti202, current version): GerarNfse, ConsultarNfsePorRps and
 *   CancelarNfse only (ModoEnvio meUnitario, ConsultaNFSe False); RPS signed (ConfigAssinar Rps/RpsGerarNFSe);
 *   TACBrNFSeXWebserviceRest2, whose DefinirMsgEnvio (ACBrNFSeXWebserviceBase.pas) posts
 *   `{"xml": "<message>", "usuario": WSUser, "senha": WSSenha}` as application/json and refuses to send without the
 *   user and password; answers read as the bare message (`GerarNfseResposta`, `ConsultarNfseRpsResposta`);
 * - two independent public clients post the same JSON (OpenAC.Net.NFSe's Centi provider notes; a production VB.NET
 *   client: `{"usuario", "senha", "xml"}` to `https://api.centi.com.br/nfe/<op>/<uf>/<city>`);
 * - Centi's schema (OpenAC.Net.NFSe `Schemas/Centi/nfse.xsd`, shipped as schemas/abrasf/nfse_v202-centi.xsd): the
 *   ABRASF 2.00 shape (the Id on the inner Rps, DataEmissao/Competencia as dateTime, Signature required in the
 *   RPS), its comments marking what is NOT to be sent (IssRetido, ResponsavelRetencao, CodigoCnae, ExigibilidadeISS,
 *   ValorIss, DescontoCondicionado, Competencia, OptanteSimplesNacional, IncentivoFiscal) and what is required
 *   (CodigoTributacaoMunicipio, Aliquota); ACBr's `Centi.GravarXml.pas` writes the same cut (GerarIDRps, no
 *   declaration Id, Aliquota with 2 decimals);
 * - the registry (ACBr's ini): per-operation URLs `/nfe/gerar|consultar/rps|cancelar[/homologacao]/<uf>/<city>` for
 *   19 cities, one older `…/ServiceNfse.svc/ws` URL for 24, where the current ACBr posts the same JSON.
 * Readings (what the sources leave open): `version` 2.00 selects the base's 2.00 shape the schema has (nothing in the
 * messages carries `versao`); ItemListaServico as Centi.GravarXml formats it: digits without the leading zero
 * (`105`, filsSemFormatacaoSemZeroEsquerda), 4 digits (`0105`, filsSemFormatacao) in the cities whose registry options
 * hold NaoFormatarItemServico;
 * no cancellation: the published schema's CancelarNfseEnvio (signed, IdentificacaoNfse without the note's Id) and
 * the current clients' message (Id, CodigoVerificacao and DescricaoCancelamento in IdentificacaoNfse, in two orders,
 * signed by ACBr and unsigned by the VB client, answered by a GerarNfseResposta whose InfNfse/Status is 3, a field
 * the schema lacks) disagree, so it is not guessed; withheld ISS is refused (the schema takes no IssRetido).
 */
/** the operation's path from whichever of the city's three registry URLs comes first */
const CENTI_PATH = '/nfe/(?:gerar|cancelar|consultar)(/homologacao)?(?:/rps)?/';

export const CENTI_CONFIG: AbrasfProviderConfig = {
  provider: 'Centi',
  version: '2.00',
  schema: 'abrasf202Centi',
  sources:
    'ACBr Centi.Provider.pas (TACBrNFSeProviderCenti202), Centi.GravarXml.pas, ACBrNFSeXWebserviceBase.pas (Rest2); ' +
    'OpenAC.Net.NFSe Schemas/Centi/nfse.xsd; ACBrNFSeXServicos.ini (registry)',
  soap: { version: '1.1', namespace: '', operationCase: 'pascal', soapAction: '' },
  body: { style: 'json', encoding: 'raw', cabecalho: false, credentials: true },
  dataNamespace: 'http://www.centi.com.br/files/nfse.xsd',
  auth: 'body-credentials',
  presentsCertificate: true,
  signature: { rps: true, lote: false, cancel: false },
  omitElements: [
    'IssRetido',
    'ResponsavelRetencao',
    'CodigoCnae',
    'ExigibilidadeISS',
    'ValorIss',
    'Competencia',
    'OptanteSimplesNacional',
    'IncentivoFiscal',
  ],
  check: (_project, invoice) => [
    ...(invoice.iss.retido
      ? [{ field: 'iss.retido', message: "Centi's schema takes no IssRetido: withheld ISS cannot be declared" }]
      : []),
    ...(invoice.iss.tribISSQN === 1 && invoice.iss.aliquota > 0
      ? []
      : [{ field: 'iss.aliquota', message: 'Centi requires the ISS rate (Aliquota) of a taxable service' }]),
    ...(invoice.servico.codigoTributacaoMunicipal
      ? []
      : [{ field: 'servico.codigoTributacaoMunicipal', message: 'required by Centi (CodigoTributacaoMunicipio)' }]),
  ],
  formats: {
    aliquota: 'percentage',
    itemListaServico: 'digitsUnpadded',
    itemListaServicoByOption: { option: 'NaoFormatarItemServico', format: 'digits' },
    lineBreak: '\n',
  },
  emission: 'emitSingle',
  limits: { rpsPerLote: 1, queryPage: 1 },
  cancellation: { defaultCode: '1' },
  operations: {
    emitSingle: { urlRewrite: { pattern: CENTI_PATH, replacement: '/nfe/gerar$1/' } },
    queryByRps: { urlRewrite: { pattern: CENTI_PATH, replacement: '/nfe/consultar$1/rps/' } },
    ...notOffered('emitAsyncBatch', 'emitSyncBatch', 'queryBatch', 'queryRange', 'cancel', 'replace'),
  },
  capabilities: { cancel: false, substitution: false, batch: false, mode: 'sync', pdf: 'none', homologation: true },
};
