import { type Static, Type } from 'typebox';
import { findCountry } from './countries.ts';
import {
  findClassificacaoTributaria,
  findCstIbsCbs,
  findFramings,
  findIndicadorOperacao,
  hasFramings,
  type IbsCbsFraming,
  isKnownNbs,
} from './ibscbs.ts';
import { findMunicipalitiesByName, findMunicipality, type Municipality } from './municipalities.ts';
import type { ProjectFiscalProfile, RegimeTributario } from './project-profile.ts';
import {
  findServiceCode,
  type IssIncidence,
  isNationalEmitterMunicipality,
  NO_ISS_ICMS_INCIDENCE,
  normalizeServiceCode,
  RENTAL_OF_MOVABLE_GOODS,
} from './service-codes.ts';
import { cnpjRoot, normalizeCnpj, normalizeCpf } from './tax-ids.ts';

// ---------------------------------------------------------------------------------------------------------------
// Request schema (spec 2.7). It generates the OpenAPI document: every property carries a description. Unknown
// properties are allowed (aliases, forward compatibility). What a schema cannot say is in checkInvoiceRequest.
// ---------------------------------------------------------------------------------------------------------------

/** Largest amount accepted: cents stay exact in a double well beyond it (the XSD allows 15 integer digits). */
const MAX_MONEY = 99_999_999_999.99;

const str = (description: string, options: Record<string, unknown> = {}) => Type.String({ description, ...options });
const opt = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Optional(schema);
const DATE = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$';
const CODE6 = '^\\d{6}$';

const EnderecoSchema = Type.Object(
  {
    logradouro: opt(str('Street type and name (xLgr).', { minLength: 1, maxLength: 255 })),
    numero: opt(str('Street number (nro).', { minLength: 1, maxLength: 60 })),
    complemento: opt(str('Address complement (xCpl).', { minLength: 1, maxLength: 156 })),
    bairro: opt(str('District / neighbourhood (xBairro).', { minLength: 1, maxLength: 60 })),
    cidade: opt(
      str('City name. In Brazil it is resolved to its IBGE code automatically (accents and case ignored).', {
        minLength: 1,
        maxLength: 60,
      }),
    ),
    codigoMunicipio: opt(
      str('Extension: 7-digit IBGE code of the city (Brazil); takes precedence over cidade.', { pattern: '^\\d{7}$' }),
    ),
    uf: opt(str('State abbreviation (e.g. SP); `EX` for an address abroad.', { pattern: '^[A-Za-z]{2}$' })),
    cep: opt(
      str('CEP, 8 digits without mask, in Brazil; the postal code (up to 11 characters) abroad.', {
        minLength: 1,
        maxLength: 11,
      }),
    ),
    pais: opt(
      str('ISO 3166-1 alpha-2 country code; default `BR`. Any other value activates the foreign-taker flow.', {
        pattern: '^[A-Za-z]{2}$',
      }),
    ),
    estadoProvincia: opt(
      str(
        'Extension: state, province or region of an address abroad (xEstProvReg); default the uf value when not EX.',
        {
          minLength: 1,
          maxLength: 60,
        },
      ),
    ),
  },
  { additionalProperties: true, description: 'Postal address.' },
);

const PartySchema = {
  cnpj: opt(str('CNPJ, 14 digits without mask; check digits validated.', { pattern: '^\\d{14}$' })),
  cpf: opt(str('CPF, 11 digits without mask; alternative to cnpj; check digits validated.', { pattern: '^\\d{11}$' })),
  nif: opt(
    str('Foreign tax id (NIF); required for a taker abroad without CNPJ/CPF.', {
      minLength: 1,
      maxLength: 40,
    }),
  ),
  motivoNaoNif: opt(
    Type.Union([Type.Literal(1), Type.Literal(2)], {
      description:
        'Extension: for a party abroad without NIF, why it is missing (cNaoNIF): 1 exempt from NIF, 2 NIF not required.',
    }),
  ),
  nome: str('Name or legal name.', { minLength: 1, maxLength: 300 }),
  inscricaoMunicipal: opt(str('Municipal registration (IM).', { minLength: 1, maxLength: 15 })),
  email: opt(str('E-mail address.', { format: 'email', maxLength: 80 })),
  telefone: opt(str('Phone number, digits only (area code + number).', { pattern: '^\\d{6,20}$' })),
  endereco: opt(EnderecoSchema),
};

const IbsCbsSchema = Type.Object(
  {
    classificacaoTributaria: opt(str('cClassTrib, 6 digits (alias cClassTrib).', { pattern: CODE6 })),
    cClassTrib: opt(str('Alias of classificacaoTributaria.', { pattern: CODE6 })),
    indicadorOperacao: opt(str('cIndOp, 6 digits (aliases cIndOp, indOp).', { pattern: CODE6 })),
    cIndOp: opt(str('Alias of indicadorOperacao.', { pattern: CODE6 })),
    indOp: opt(str('Alias of indicadorOperacao.', { pattern: CODE6 })),
    cst: opt(
      str('IBS/CBS CST, 3 digits (alias cstIbscbs); default the CST of the classification.', { pattern: '^\\d{3}$' }),
    ),
    cstIbscbs: opt(str('Alias of cst.', { pattern: '^\\d{3}$' })),
    nbs: opt(str('NBS, 9 digits (alias codigoNbs); also accepted as servico.nbs.', { pattern: '^\\d{9}$' })),
    codigoNbs: opt(str('Alias of nbs.', { pattern: '^\\d{9}$' })),
    consumidorFinal: opt(
      Type.Union([Type.Boolean(), Type.Literal('0'), Type.Literal('1'), Type.Literal(0), Type.Literal(1)], {
        description: 'Purchase for personal use or consumption (indFinal); also 0/1; alias indFinal; default false.',
      }),
    ),
    indFinal: opt(
      Type.Union([Type.Boolean(), Type.Literal('0'), Type.Literal('1'), Type.Literal(0), Type.Literal(1)], {
        description: 'Alias of consumidorFinal.',
      }),
    ),
    destinatarioPrincipal: opt(
      Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal(0), Type.Literal(1)], {
        description: 'indDest: `0` (default) the taker is the recipient, `1` another recipient (send destinatario).',
      }),
    ),
    indDest: opt(
      Type.Union([Type.Literal('0'), Type.Literal('1'), Type.Literal(0), Type.Literal(1)], {
        description: 'Alias of destinatarioPrincipal.',
      }),
    ),
    tipoOperacao: opt(
      Type.Union([Type.String({ pattern: '^[1-5]$' }), Type.Integer({ minimum: 1, maximum: 5 })], {
        description:
          'tpOper: 1 supply with later payment, 2 payment received with supply done, 3 supply with payment done, 4 payment received with later supply, 5 concomitant; alias tpOper.',
      }),
    ),
    tpOper: opt(
      Type.Union([Type.String({ pattern: '^[1-5]$' }), Type.Integer({ minimum: 1, maximum: 5 })], {
        description: 'Alias of tipoOperacao.',
      }),
    ),
    tipoEnteGovernamental: opt(
      Type.Union(
        [
          Type.String({ pattern: '^[12349]$' }),
          Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3), Type.Literal(4), Type.Literal(9)]),
        ],
        {
          description:
            'tpEnteGov: 1 federal, 2 state, 3 district, 4 municipal, 9 other (9 is not in the national XSD and is omitted there); aliases enteGovernamental, tpEnteGov.',
        },
      ),
    ),
    enteGovernamental: opt(
      Type.Union(
        [
          Type.String({ pattern: '^[12349]$' }),
          Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3), Type.Literal(4), Type.Literal(9)]),
        ],
        {
          description: 'Alias of tipoEnteGovernamental.',
        },
      ),
    ),
    tpEnteGov: opt(
      Type.Union(
        [
          Type.String({ pattern: '^[12349]$' }),
          Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3), Type.Literal(4), Type.Literal(9)]),
        ],
        {
          description: 'Alias of tipoEnteGovernamental.',
        },
      ),
    ),
    destinatario: opt(
      Type.Object(PartySchema, {
        additionalProperties: true,
        description: 'Extension: the recipient of the operation when destinatarioPrincipal is 1 (IBSCBS/dest).',
      }),
    ),
  },
  {
    additionalProperties: true,
    description:
      'IBS/CBS framing. Precedence per field: valores.ibscbs, servico.ibscbs, project defaults, then the official Anexo VIII table.',
  },
);

const money = (description: string) => Type.Number({ description, minimum: 0, maximum: MAX_MONEY });
const percent = (description: string) => Type.Number({ description, minimum: 0, maximum: 100 });

export const InvoiceRequestSchema = Type.Object(
  {
    tomador: Type.Object(PartySchema, {
      additionalProperties: true,
      description: 'Service taker. Exactly one identification: cnpj, cpf, or nif (or motivoNaoNif) abroad.',
    }),
    servico: Type.Object(
      {
        descricao: str('Full description of the service (xDescServ).', { minLength: 1, maxLength: 2000 }),
        codigo: opt(
          str('cTribNac, 6 digits (IISSDD); defaults to the project code. 4 or 5 zeros mean 000000.', {
            minLength: 4,
            maxLength: 10,
          }),
        ),
        codigoServico: opt(
          str('Municipal service code (city of São Paulo: 4 to 5 digits).', { pattern: '^\\d{4,5}$' }),
        ),
        localPrestacao: opt(
          str(
            '7-digit IBGE code of the municipality where the service was performed, or the ISO2 country when performed abroad; default the provider municipality.',
            { pattern: '^(\\d{7}|[A-Za-z]{2})$' },
          ),
        ),
        nbs: opt(str('NBS, 9 digits; part of the IBS/CBS framing.', { pattern: '^\\d{9}$' })),
        codigoTributacaoMunicipal: opt(
          str('Municipal breakdown (cTribMun), 3 digits (7 digits for one state capital).', {
            pattern: '^\\d{3}(\\d{4})?$',
          }),
        ),
        cnae: opt(str('CNAE of the service, for the engines that take it.', { pattern: '^\\d{7,9}$' })),
        informacoesComplementares: opt(
          str('Complementary information printed in the DANFSe (xInfComp).', { minLength: 1, maxLength: 2000 }),
        ),
        pedidoCompra: opt(str('Purchase order number (xPed).', { minLength: 1, maxLength: 60 })),
        documentoReferencia: opt(str('Reference contract or invoice (docRef).', { minLength: 1, maxLength: 255 })),
        obra: opt(
          Type.Object(
            {
              inscricaoImobiliaria: opt(str('Fiscal real-estate registration (inscImobFisc).', { maxLength: 30 })),
              codigoObra: opt(str('CNO or CEI number of the building work (cObra).', { maxLength: 30 })),
              codigoCib: opt(
                str('Brazilian Real-Estate Registry code (cCIB), 8 characters.', { minLength: 8, maxLength: 8 }),
              ),
              art: opt(str('Technical responsibility document (ART/RRT), idDocTec.', { maxLength: 40 })),
              endereco: opt(EnderecoSchema),
            },
            { additionalProperties: true, description: 'Building-work group (obra).' },
          ),
        ),
        evento: opt(
          Type.Object(
            {
              nome: str('Event name (LC 116 item 12).', { minLength: 1, maxLength: 255 }),
              dataInicio: str('Start date, YYYY-MM-DD.', { pattern: DATE }),
              dataFim: str('End date, YYYY-MM-DD; not before dataInicio.', { pattern: DATE }),
              id: opt(str('Event identifier given by the tax administration (idAtvEvt).', { maxLength: 30 })),
              endereco: opt(EnderecoSchema),
            },
            { additionalProperties: true, description: 'Event-activity group (atvEvento); send id or endereco.' },
          ),
        ),
        ibscbs: opt(IbsCbsSchema),
      },
      { additionalProperties: true, description: 'The service.' },
    ),
    valores: Type.Object(
      {
        total: Type.Number({
          description: 'Gross amount of the service in BRL (vServ), 2 decimals.',
          exclusiveMinimum: 0,
          maximum: MAX_MONEY,
        }),
        aliquotaIss: Type.Number({
          description: 'ISS rate in % (0 to 5); 0 for immunity, export or no incidence.',
          minimum: 0,
          maximum: 5,
        }),
        issRetido: opt(Type.Boolean({ description: 'true: ISS withheld by the taker (tpRetISSQN 2); default false.' })),
        tribISSQN: opt(
          Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3), Type.Literal(4)], {
            description:
              'ISS taxation: 1 taxable, 2 immunity, 3 export, 4 no incidence; 3 when exportacao is given; default the project tributacaoIss, else 1.',
          }),
        ),
        tipoImunidade: opt(
          Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3), Type.Literal(4), Type.Literal(5)], {
            description:
              'Extension: immunity type when tribISSQN is 2 (tpImunidade, CF88 art. 150 VI a-e: 1 public entities, 2 temples, 3 parties/unions/education/social assistance, 4 books and paper, 5 Brazilian music recordings).',
          }),
        ),
        exportacao: opt(
          Type.Object(
            {
              modoPrestacao: opt(
                Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3), Type.Literal(4)], {
                  description:
                    'mdPrestacao: 1 cross-border, 2 consumption in Brazil, 3 commercial presence abroad, 4 temporary movement.',
                }),
              ),
              vinculoPartes: opt(
                Type.Union(
                  [
                    Type.Literal(0),
                    Type.Literal(1),
                    Type.Literal(2),
                    Type.Literal(3),
                    Type.Literal(4),
                    Type.Literal(5),
                    Type.Literal(6),
                  ],
                  {
                    description:
                      'vincPrest: 0 none (default), 1 controlled, 2 controlling, 3 affiliated, 4 head office, 5 branch, 6 other.',
                  },
                ),
              ),
              codigoMoeda: opt(str('3-digit central-bank currency code (tpMoeda).', { pattern: '^\\d{3}$' })),
              valorServicoMoeda: opt(
                Type.Number({ description: 'Amount in the foreign currency (vServMoeda).', exclusiveMinimum: 0 }),
              ),
              fomentoPrestador: opt(
                str('Provider support mechanism (mecAFComexP), 2 digits; default `01` (none).', {
                  pattern: '^\\d{2}$',
                }),
              ),
              fomentoTomador: opt(
                str('Taker support mechanism (mecAFComexT), 2 digits; default `01` (none).', { pattern: '^\\d{2}$' }),
              ),
              movimentacaoTemporariaBens: opt(
                Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(3)], {
                  description: 'movTempBens: 1 no (default), 2 import declaration, 3 export declaration.',
                }),
              ),
              declaracaoImportacao: opt(
                str('Extension: import declaration number (nDI), required when movimentacaoTemporariaBens is 2.', {
                  minLength: 1,
                  maxLength: 12,
                }),
              ),
              registroExportacao: opt(
                str('Extension: export registration number (nRE), required when movimentacaoTemporariaBens is 3.', {
                  minLength: 1,
                  maxLength: 12,
                }),
              ),
              compartilharMdic: opt(
                Type.Boolean({
                  description: 'Share the invoice data with the foreign-trade authority (mdic); default false.',
                }),
              ),
              paisResultado: opt(
                str('ISO2 country where the result of the service occurs (cPaisResult); required in export notes.', {
                  pattern: '^[A-Za-z]{2}$',
                }),
              ),
            },
            {
              additionalProperties: true,
              description:
                'Export group (comExt); required when servico.localPrestacao is a country or tribISSQN is 3.',
            },
          ),
        ),
        totaisTributosAproximados: opt(
          Type.Object(
            {
              percentualTributacaoFederal: opt(percent('Approximate federal taxes, %.')),
              percentualTributacaoEstadual: opt(percent('Approximate state taxes, %.')),
              percentualTributacaoMunicipal: opt(percent('Approximate municipal taxes, %.')),
              valorTributacaoFederal: opt(money('Approximate federal taxes, BRL.')),
              valorTributacaoEstadual: opt(money('Approximate state taxes, BRL.')),
              valorTributacaoMunicipal: opt(money('Approximate municipal taxes, BRL.')),
            },
            {
              additionalProperties: true,
              description: 'Approximate taxes (Lei 12.741/2012): percentages or amounts, never both.',
            },
          ),
        ),
        pisCofins: opt(
          Type.Object(
            {
              cst: opt(str('PIS/COFINS CST, 2 digits; default the project cstPisCofins.', { pattern: '^\\d{2}$' })),
              baseCalculo: opt(money('Calculation base in BRL; default the service total.')),
              aliquotaPis: opt(percent('PIS rate, %; default the project aliquotaPis.')),
              aliquotaCofins: opt(percent('COFINS rate, %; default the project aliquotaCofins.')),
              valorPis: opt(money('PIS amount override, BRL; default base × rate.')),
              valorCofins: opt(money('COFINS amount override, BRL; default base × rate.')),
              tipoRetencao: opt(
                Type.Integer({
                  minimum: 0,
                  maximum: 9,
                  description:
                    'tpRetPisCofins: 0 not withheld (default), 1 PIS/COFINS withheld, 3 all withheld (0-9 per XSD).',
                }),
              ),
            },
            {
              additionalProperties: true,
              description: 'PIS/COFINS (national environment; ignored for MEI and Simples).',
            },
          ),
        ),
        retencaoIrrf: opt(Type.Number({ description: 'IRRF withheld, BRL (vRetIRRF).', exclusiveMinimum: 0 })),
        retencaoCp: opt(
          Type.Number({ description: 'Social-security contribution withheld, BRL (vRetCP).', exclusiveMinimum: 0 }),
        ),
        retencaoCsll: opt(Type.Number({ description: 'CSLL withheld, BRL (vRetCSLL).', exclusiveMinimum: 0 })),
        ibscbs: opt(IbsCbsSchema),
      },
      { additionalProperties: true, description: 'Amounts and taxes.' },
    ),
    competencia: opt(
      str('Accrual month, YYYY-MM; default the current month.', { pattern: '^\\d{4}-(0[1-9]|1[0-2])$' }),
    ),
    referencia: opt(str("Caller's external identifier.", { minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: true, description: 'NFS-e issue request (POST /emitir).' },
);

export type InvoiceRequest = Static<typeof InvoiceRequestSchema>;

// ---------------------------------------------------------------------------------------------------------------
// Normalized invoice: what every engine (national DPS, ABRASF, São Paulo) builds from.
// ---------------------------------------------------------------------------------------------------------------

/** Federal identification of a party. `semNif`: abroad without NIF, with the reason (cNaoNIF 1 or 2). */
export type PartyId =
  | { kind: 'cnpj'; cnpj: string }
  | { kind: 'cpf'; cpf: string }
  | { kind: 'nif'; nif: string }
  | { kind: 'semNif'; motivo: 1 | 2 };

export interface NormalizedAddress {
  /** ISO2 country; `BR` for a national address. */
  pais: string;
  nacional: boolean;
  logradouro: string | null;
  numero: string | null;
  complemento: string | null;
  bairro: string | null;
  /** The IBGE name in Brazil; as given abroad. */
  cidade: string | null;
  /** IBGE code (Brazil only). */
  codigoMunicipio: string | null;
  /** State abbreviation (Brazil only). */
  uf: string | null;
  /** State, province or region (abroad only). */
  estadoProvincia: string | null;
  /** CEP (8 digits) in Brazil; postal code abroad. */
  cep: string | null;
}

export interface NormalizedParty {
  id: PartyId;
  nome: string;
  inscricaoMunicipal: string | null;
  email: string | null;
  telefone: string | null;
  endereco: NormalizedAddress | null;
  /** The party is abroad (NIF or foreign address). */
  estrangeiro: boolean;
}

export type LocalPrestacao = { kind: 'municipio'; codigoMunicipio: string } | { kind: 'pais'; pais: string };

export interface NormalizedObra {
  inscricaoImobiliaria: string | null;
  codigoObra: string | null;
  codigoCib: string | null;
  art: string | null;
  endereco: NormalizedAddress | null;
}

export interface NormalizedEvento {
  nome: string;
  dataInicio: string;
  dataFim: string;
  id: string | null;
  endereco: NormalizedAddress | null;
}

export interface NormalizedService {
  /** cTribNac, 6 digits. */
  cTribNac: string;
  /** LC 116 subitem `II.SS`. */
  subitem: string;
  /** Description of the code in the national list. */
  descricaoNacional: string;
  descricao: string;
  /** Municipal breakdown as sent (3 digits, or 7 for one capital); null when not sent. */
  codigoTributacaoMunicipal: string | null;
  /** Municipal service code (São Paulo): request, else the project codigoServicoSp. */
  codigoServicoMunicipal: string | null;
  /** Final NBS (9 digits): the IBS/CBS framing, else servico.nbs / project default. */
  nbs: string | null;
  cnae: string | null;
  localPrestacao: LocalPrestacao;
  /** Place of ISS incidence of the code (LC 116 art. 3): provider, place of service, taker, or none. */
  incidencia: IssIncidence;
  /** Municipality of ISS incidence (cLocIncid); null with tribISSQN 2/3/4, abroad, or when unknown. */
  municipioIncidencia: string | null;
  obra: NormalizedObra | null;
  evento: NormalizedEvento | null;
  informacoesComplementares: string | null;
  pedidoCompra: string | null;
  documentoReferencia: string | null;
}

export type TribIssqn = 1 | 2 | 3 | 4;

export interface IssDecision {
  /** 1 taxable, 2 immunity, 3 export, 4 no incidence. */
  tribISSQN: TribIssqn;
  tipoImunidade: 1 | 2 | 3 | 4 | 5 | null;
  retido: boolean;
  /** 1 not withheld, 2 withheld by the taker. */
  tpRetISSQN: 1 | 2;
  /** The rate the caller sent, %. */
  aliquota: number;
  /**
   * The rate the national DPS declares in pAliq, or null when the business rules forbid it; `pAliqRule` names the
   * rule (Anexo I RN: E0600 MEI, E0602 not taxable, E0617/E0619 not opted, E0621-E0640 Simples ME/EPP).
   */
  pAliq: number | null;
  pAliqRule: string;
  /** The incidence municipality is active in the national system and uses the national emitter. */
  municipioIncidenciaNoEmissorNacional: boolean;
}

export interface NormalizedExport {
  modoPrestacao: 1 | 2 | 3 | 4;
  vinculoPartes: 0 | 1 | 2 | 3 | 4 | 5 | 6;
  codigoMoeda: string;
  valorServicoMoeda: number;
  fomentoPrestador: string;
  fomentoTomador: string;
  movimentacaoTemporariaBens: 1 | 2 | 3;
  declaracaoImportacao: string | null;
  registroExportacao: string | null;
  compartilharMdic: boolean;
  /** ISO2 country where the result occurs; null when not sent (then it cannot be declared). */
  paisResultado: string | null;
}

export interface NormalizedPisCofins {
  cst: string;
  /** null for CST 00, 08, 09 (no base may be declared). */
  baseCalculo: number | null;
  aliquotaPis: number | null;
  aliquotaCofins: number | null;
  valorPis: number | null;
  valorCofins: number | null;
  tipoRetencao: number;
  /** Where the CST came from. */
  source: 'request' | 'project';
}

export interface NormalizedFederalTaxes {
  pisCofins: NormalizedPisCofins | null;
  retencaoIrrf: number | null;
  retencaoCp: number | null;
  retencaoCsll: number | null;
}

/** Approximate taxes (Lei 12.741): amounts, percentages, the Simples rate, or not informed. */
export type ApproximateTaxes =
  | { kind: 'valores'; federal: number; estadual: number; municipal: number }
  | { kind: 'percentuais'; federal: number; estadual: number; municipal: number }
  | { kind: 'simples'; percentual: number }
  | { kind: 'naoInformado' };

/** Where a resolved IBS/CBS field came from: a body path, a project field, or the annex table. */
export type IbsCbsSource = string;

export interface NormalizedIbsCbs {
  nbs: string;
  indicadorOperacao: string;
  classificacaoTributaria: string;
  cst: string;
  consumidorFinal: boolean;
  /** 0: the taker is the recipient; 1: `destinatario` is. */
  indDest: 0 | 1;
  destinatario: NormalizedParty | null;
  tipoOperacao: 1 | 2 | 3 | 4 | 5 | null;
  /** 1-4; the request value 9 (other) is not in the national XSD and becomes null (see notes). */
  tipoEnteGovernamental: 1 | 2 | 3 | 4 | null;
  /** The request asked for tpEnteGov 9. */
  tipoEnteGovernamentalOutro: boolean;
  sources: {
    nbs: IbsCbsSource;
    indicadorOperacao: IbsCbsSource;
    classificacaoTributaria: IbsCbsSource;
    cst: IbsCbsSource;
  };
}

export interface NormalizedRegime {
  regimeTributario: RegimeTributario;
  /** opSimpNac: 1 not opted, 2 MEI, 3 ME/EPP (3 and 3e). */
  opSimpNac: 1 | 2 | 3;
  /** regApTribSN, only for ME/EPP: 1 all in the DAS, 2 ISS outside, 3 federal and ISS outside. */
  regApTribSN: 1 | 2 | 3 | null;
  regEspTrib: 0;
  mei: boolean;
  simples: boolean;
}

export interface NormalizedInvoice {
  tomador: NormalizedParty;
  servico: NormalizedService;
  /** Gross amount, BRL, rounded to cents. */
  total: number;
  iss: IssDecision;
  exportacao: NormalizedExport | null;
  /** Federal groups (regime 1 only); null when none applies. */
  federal: NormalizedFederalTaxes | null;
  totaisTributos: ApproximateTaxes;
  ibscbs: NormalizedIbsCbs | null;
  regime: NormalizedRegime;
  /** YYYY-MM. */
  competencia: string;
  referencia: string | null;
  /** Informational notes about decisions taken (ignored fields, omitted values). */
  notes: string[];
}

export interface FieldError {
  field: string;
  message: string;
}

export type InvoiceCheckResult =
  | { ok: true; value: NormalizedInvoice }
  | { ok: false; code: string; errors: FieldError[]; details?: unknown };

export const INVOICE_ERROR_CODES = {
  validation: 'VALIDATION_FAILED',
  projectIncomplete: 'PROJECT_INCOMPLETE',
  ambiguous: 'IBSCBS_FRAMING_AMBIGUOUS',
} as const;

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

const UFS = new Set('AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO'.split(' '));
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/** Brasília time, the offset of the national system's timestamps. */
const BRT_OFFSET_MINUTES = -180;

/** Rounds to cents, half away from zero, without binary-float surprises (1.005 → 1.01). */
export function roundMoney(value: number): number {
  const sign = value < 0 ? -1 : 1;
  return (sign * Math.round(Number(`${Math.abs(value)}e2`))) / 100;
}

function hasAtMostTwoDecimals(value: number): boolean {
  return Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;
}

function clean(value: string | undefined | null): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

function isValidDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return y >= 2000 && y <= 2099 && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** The month (YYYY-MM) of an instant in Brasília time. */
export function monthInBrasilia(instant: Date): string {
  return new Date(instant.getTime() + BRT_OFFSET_MINUTES * 60_000).toISOString().slice(0, 7);
}

function resolveCity(name: string, uf: string | null): Municipality[] {
  return findMunicipalitiesByName(name, uf);
}

type Errors = FieldError[];

function normalizeAddress(
  raw: Static<typeof EnderecoSchema> | undefined,
  path: string,
  errors: Errors,
): NormalizedAddress | null {
  if (!raw) return null;
  const pais = (clean(raw.pais) ?? 'BR').toUpperCase();
  let uf = clean(raw.uf)?.toUpperCase() ?? null;
  if (!findCountry(pais)) errors.push({ field: `${path}.pais`, message: `unknown ISO2 country code '${pais}'` });
  const base = {
    pais,
    logradouro: clean(raw.logradouro),
    numero: clean(raw.numero),
    complemento: clean(raw.complemento),
    bairro: clean(raw.bairro),
  };
  if (pais !== 'BR') {
    const cep = clean(raw.cep);
    if (cep && cep.length > 11) errors.push({ field: `${path}.cep`, message: 'postal code longer than 11 characters' });
    const estado = clean(raw.estadoProvincia) ?? (uf && uf !== 'EX' ? clean(raw.uf) : null);
    return {
      ...base,
      nacional: false,
      cidade: clean(raw.cidade),
      codigoMunicipio: null,
      uf: null,
      estadoProvincia: estado,
      cep,
    };
  }
  if (uf === 'EX') {
    errors.push({ field: `${path}.pais`, message: "uf 'EX' (abroad) needs the ISO2 country of the address in pais" });
    uf = null;
  } else if (uf && !UFS.has(uf)) {
    errors.push({ field: `${path}.uf`, message: `unknown state abbreviation '${uf}'` });
    uf = null;
  }
  const cepRaw = clean(raw.cep);
  let cep: string | null = null;
  if (cepRaw) {
    if (/^\d{8}$/.test(cepRaw)) cep = cepRaw;
    else errors.push({ field: `${path}.cep`, message: 'CEP must have 8 digits, without mask' });
  }
  let municipality: Municipality | undefined;
  const code = clean(raw.codigoMunicipio);
  const cidade = clean(raw.cidade);
  if (code) {
    municipality = /^\d{7}$/.test(code) ? findMunicipality(code) : undefined;
    if (!municipality)
      errors.push({ field: `${path}.codigoMunicipio`, message: `unknown IBGE municipality '${code}'` });
    else if (uf && municipality.uf !== uf) {
      errors.push({ field: `${path}.uf`, message: `municipality ${code} is in ${municipality.uf}, not ${uf}` });
    }
  } else if (cidade) {
    const found = resolveCity(cidade, uf);
    if (found.length === 1) municipality = found[0];
    else if (found.length === 0) {
      errors.push({
        field: `${path}.cidade`,
        message: uf ? `no municipality named '${cidade}' in ${uf}` : `no municipality named '${cidade}'`,
      });
    } else {
      errors.push({
        field: `${path}.uf`,
        message: `'${cidade}' exists in ${found.map((m) => m.uf).join(', ')}: send the state abbreviation`,
      });
    }
  }
  return {
    ...base,
    nacional: true,
    cidade: municipality?.name ?? cidade,
    codigoMunicipio: municipality?.code ?? null,
    uf: municipality?.uf ?? uf,
    estadoProvincia: null,
    cep,
  };
}

type PartyInput = {
  cnpj?: string;
  cpf?: string;
  nif?: string;
  motivoNaoNif?: 1 | 2;
  nome: string;
  inscricaoMunicipal?: string;
  email?: string;
  telefone?: string;
  endereco?: Static<typeof EnderecoSchema>;
};

function normalizeParty(raw: PartyInput, path: string, errors: Errors): NormalizedParty | null {
  const before = errors.length;
  const cnpjRaw = clean(raw.cnpj);
  const cpfRaw = clean(raw.cpf);
  const nif = clean(raw.nif);
  const given = [cnpjRaw && 'cnpj', cpfRaw && 'cpf', nif && 'nif'].filter(Boolean) as string[];
  if (raw.motivoNaoNif !== undefined && given.length === 0) given.push('motivoNaoNif');
  else if (raw.motivoNaoNif !== undefined) {
    errors.push({ field: `${path}.motivoNaoNif`, message: 'only for a party abroad without cnpj, cpf or nif' });
  }
  if (given.length === 0) {
    errors.push({ field: path, message: 'one identification is required: cnpj, cpf, or nif (abroad)' });
  } else if (given.length > 1) {
    errors.push({ field: `${path}.${given[1]}`, message: `only one identification is allowed; ${given[0]} was given` });
  }
  let id: PartyId | null = null;
  if (cnpjRaw) {
    const cnpj = /^\d{14}$/.test(cnpjRaw) ? normalizeCnpj(cnpjRaw) : null;
    if (!cnpj)
      errors.push({ field: `${path}.cnpj`, message: 'invalid CNPJ: 14 digits without mask, valid check digits' });
    else id = { kind: 'cnpj', cnpj };
  } else if (cpfRaw) {
    const cpf = /^\d{11}$/.test(cpfRaw) ? normalizeCpf(cpfRaw) : null;
    if (!cpf) errors.push({ field: `${path}.cpf`, message: 'invalid CPF: 11 digits without mask, valid check digits' });
    else id = { kind: 'cpf', cpf };
  } else if (nif) {
    if (nif.length > 40) errors.push({ field: `${path}.nif`, message: 'NIF longer than 40 characters' });
    else id = { kind: 'nif', nif };
  } else if (raw.motivoNaoNif === 1 || raw.motivoNaoNif === 2) {
    id = { kind: 'semNif', motivo: raw.motivoNaoNif };
  } else if (raw.motivoNaoNif !== undefined) {
    errors.push({ field: `${path}.motivoNaoNif`, message: 'must be 1 (exempt) or 2 (not required)' });
  }
  const nome = clean(raw.nome);
  if (!nome) errors.push({ field: `${path}.nome`, message: 'required' });
  const email = clean(raw.email);
  if (email && (!EMAIL.test(email) || email.length > 80)) {
    errors.push({ field: `${path}.email`, message: 'invalid e-mail address (max 80 characters)' });
  }
  const telefone = clean(raw.telefone);
  if (telefone && !/^\d{6,20}$/.test(telefone)) {
    errors.push({ field: `${path}.telefone`, message: 'digits only, 6 to 20 (area code + number)' });
  }
  const im = clean(raw.inscricaoMunicipal);
  if (im && im.length > 15) errors.push({ field: `${path}.inscricaoMunicipal`, message: 'max 15 characters' });
  const endereco = normalizeAddress(raw.endereco, `${path}.endereco`, errors);
  const abroad = endereco ? !endereco.nacional : false;
  if ((id?.kind === 'nif' || id?.kind === 'semNif') && !abroad) {
    errors.push({
      field: `${path}.endereco.pais`,
      message: 'a party identified by NIF (or without NIF) is abroad: send its address with a country other than BR',
    });
  }
  if (errors.length > before || !id || !nome) return null;
  return {
    id,
    nome,
    inscricaoMunicipal: im,
    email,
    telefone,
    endereco,
    estrangeiro: abroad || id.kind === 'nif' || id.kind === 'semNif',
  };
}

function firstDefined<T>(...candidates: [T | undefined | null, string][]): { value: T; field: string } | null {
  for (const [value, field] of candidates)
    if (value !== undefined && value !== null && value !== '') return { value, field };
  return null;
}

type IbsCbsInput = Static<typeof IbsCbsSchema>;

/** Reads one IBS/CBS field from a group with its aliases; conflicting alias values are errors. */
function readAliased<T>(
  group: IbsCbsInput | undefined,
  path: string,
  names: (keyof IbsCbsInput)[],
  errors: Errors,
): { value: T; field: string } | null {
  if (!group) return null;
  let found: { value: T; field: string } | null = null;
  for (const name of names) {
    const value = group[name] as T | undefined;
    if (value === undefined || value === null || value === '') continue;
    if (!found) found = { value, field: `${path}.${String(name)}` };
    else if (String(found.value) !== String(value)) {
      errors.push({
        field: `${path}.${String(name)}`,
        message: `conflicts with ${found.field} (${String(found.value)})`,
      });
    }
  }
  return found;
}

interface FixedCode {
  value: string;
  field: string;
  /** Precedence rank: 0 valores.ibscbs, 1 servico.ibscbs, 2 servico.nbs, 3 project. */
  rank: number;
}

// ---------------------------------------------------------------------------------------------------------------
// checkInvoiceRequest
// ---------------------------------------------------------------------------------------------------------------

export interface CheckInvoiceOptions {
  /** The current instant (default `new Date()`): default competencia and the future-competencia check. */
  now?: Date;
}

/**
 * Validates an issue request against everything the schema cannot express and resolves it, with the project's
 * fiscal profile, into the {@link NormalizedInvoice} the engines build from. Errors carry the dotted path of the
 * body field (`tomador.cnpj`, `valores.ibscbs.cst`) or of the project field (`project.defaultNbs`).
 */
export function checkInvoiceRequest(
  body: InvoiceRequest,
  project: ProjectFiscalProfile,
  options: CheckInvoiceOptions = {},
): InvoiceCheckResult {
  const now = options.now ?? new Date();
  const notes: string[] = [];

  // --- project --------------------------------------------------------------------------------------------------
  const projectErrors: Errors = [];
  if (!project.codigoMunicipio || !findMunicipality(project.codigoMunicipio)) {
    projectErrors.push({
      field: 'project.codigoMunicipio',
      message: 'the project needs a valid IBGE municipality code',
    });
  }
  if (!project.regimeTributario) {
    projectErrors.push({
      field: 'project.regimeTributario',
      message: 'the project needs its tax regime (1, 2, 3 or 3e)',
    });
  }
  if (projectErrors.length > 0)
    return { ok: false, code: INVOICE_ERROR_CODES.projectIncomplete, errors: projectErrors };
  const providerMunicipality = project.codigoMunicipio!;
  const regime = resolveRegime(project.regimeTributario!, project.regimeIss, notes);

  const errors: Errors = [];
  const servico = body.servico ?? ({} as InvoiceRequest['servico']);
  const valores = body.valores ?? ({} as InvoiceRequest['valores']);

  // --- taker ----------------------------------------------------------------------------------------------------
  const tomador = body.tomador ? normalizeParty(body.tomador, 'tomador', errors) : null;
  if (!body.tomador) errors.push({ field: 'tomador', message: 'required' });
  if (tomador?.id.kind === 'cnpj' && cnpjRoot(tomador.id.cnpj) === cnpjRoot(project.cnpj)) {
    errors.push({ field: 'tomador.cnpj', message: 'the taker cannot be the provider itself (same CNPJ root, E0202)' });
  }

  // --- service code -----------------------------------------------------------------------------------------------
  const codeSource = firstDefined<string>(
    [clean(servico.codigo), 'servico.codigo'],
    [clean(project.codigoTributacao), 'project.codigoTributacao'],
  );
  let serviceCode: ReturnType<typeof findServiceCode>;
  if (!codeSource) {
    errors.push({ field: 'servico.codigo', message: 'required: the project has no default codigoTributacao' });
  } else {
    const code = normalizeServiceCode(codeSource.value);
    if (!code) errors.push({ field: codeSource.field, message: 'cTribNac must have 6 digits (IISSDD)' });
    else {
      serviceCode = findServiceCode(code);
      if (!serviceCode)
        errors.push({ field: codeSource.field, message: `${code} is not in the national service list` });
    }
  }
  const descricao = clean(servico.descricao);
  if (!descricao) errors.push({ field: 'servico.descricao', message: 'required' });
  else if (!/[0-9A-Za-z\u00C0-\u00FF]/.test(descricao)) {
    // the layout's character set is Latin-1: a text of emoji or other scripts would print as nothing
    errors.push({ field: 'servico.descricao', message: 'must contain letters or digits of the Latin alphabet' });
  }
  const cTribMun = clean(servico.codigoTributacaoMunicipal);
  if (cTribMun && !/^\d{3}(\d{4})?$/.test(cTribMun)) {
    errors.push({ field: 'servico.codigoTributacaoMunicipal', message: '3 digits (7 for the capital that uses them)' });
  }
  const codigoServico = clean(servico.codigoServico) ?? clean(project.codigoServicoSp);
  if (clean(servico.codigoServico) && !/^\d{4,5}$/.test(codigoServico!)) {
    errors.push({ field: 'servico.codigoServico', message: '4 or 5 digits' });
  }
  const info = clean(servico.informacoesComplementares);
  if (info && info.length > 2000) {
    errors.push({ field: 'servico.informacoesComplementares', message: 'max 2000 characters' });
  }
  const pedidoCompra = clean(servico.pedidoCompra);
  if (pedidoCompra && pedidoCompra.length > 60)
    errors.push({ field: 'servico.pedidoCompra', message: 'max 60 characters' });
  const docRef = clean(servico.documentoReferencia);
  if (docRef && docRef.length > 255) {
    errors.push({ field: 'servico.documentoReferencia', message: 'max 255 characters' });
  }
  const cnae = clean(servico.cnae);
  if (cnae && !/^\d{7,9}$/.test(cnae)) errors.push({ field: 'servico.cnae', message: '7 to 9 digits' });

  // --- place of service -------------------------------------------------------------------------------------------
  let localPrestacao: LocalPrestacao = { kind: 'municipio', codigoMunicipio: providerMunicipality };
  const local = clean(servico.localPrestacao);
  if (local) {
    if (/^\d{7}$/.test(local)) {
      if (findMunicipality(local)) localPrestacao = { kind: 'municipio', codigoMunicipio: local };
      else errors.push({ field: 'servico.localPrestacao', message: `unknown IBGE municipality '${local}'` });
    } else if (/^[A-Za-z]{2}$/.test(local)) {
      const pais = local.toUpperCase();
      if (pais === 'BR') {
        errors.push({ field: 'servico.localPrestacao', message: 'use the IBGE code of the municipality for Brazil' });
      } else if (!findCountry(pais)) {
        errors.push({ field: 'servico.localPrestacao', message: `unknown ISO2 country code '${pais}'` });
      } else localPrestacao = { kind: 'pais', pais };
    } else {
      errors.push({ field: 'servico.localPrestacao', message: '7-digit IBGE code, or ISO2 country code abroad' });
    }
  }

  // --- amounts ----------------------------------------------------------------------------------------------------
  const total = typeof valores.total === 'number' ? valores.total : Number.NaN;
  if (!(total > 0) || total > MAX_MONEY) {
    errors.push({ field: 'valores.total', message: 'must be greater than 0' });
  } else if (!hasAtMostTwoDecimals(total)) {
    errors.push({ field: 'valores.total', message: 'at most 2 decimal places' });
  }
  const aliquota = typeof valores.aliquotaIss === 'number' ? valores.aliquotaIss : Number.NaN;
  if (!(aliquota >= 0 && aliquota <= 5)) {
    errors.push({ field: 'valores.aliquotaIss', message: 'required, between 0 and 5 (%)' });
  } else if (!hasAtMostTwoDecimals(aliquota)) {
    errors.push({ field: 'valores.aliquotaIss', message: 'at most 2 decimal places' });
  }

  // --- export -----------------------------------------------------------------------------------------------------
  const exportacao = valores.exportacao ? normalizeExport(valores.exportacao, errors) : null;
  if (localPrestacao.kind === 'pais' && !valores.exportacao) {
    errors.push({ field: 'valores.exportacao', message: 'required when the service is performed abroad' });
  }

  // --- ISS taxation -----------------------------------------------------------------------------------------------
  let tribISSQN: TribIssqn;
  if (valores.tribISSQN !== undefined) {
    tribISSQN = valores.tribISSQN;
    if (![1, 2, 3, 4].includes(tribISSQN)) {
      errors.push({ field: 'valores.tribISSQN', message: '1, 2, 3 or 4' });
      tribISSQN = 1;
    }
  } else if (serviceCode?.code === NO_ISS_ICMS_INCIDENCE || serviceCode?.code === RENTAL_OF_MOVABLE_GOODS) {
    tribISSQN = 4;
  } else if (valores.exportacao) tribISSQN = 3;
  else tribISSQN = project.tributacaoIss ?? 1;
  if (serviceCode?.code === NO_ISS_ICMS_INCIDENCE && tribISSQN !== 4) {
    errors.push({
      field: 'valores.tribISSQN',
      message: 'code 990101 has no ISS incidence: tribISSQN must be 4 (E0532)',
    });
  }
  if (tribISSQN === 3 && !valores.exportacao) {
    errors.push({ field: 'valores.exportacao', message: 'required for an export (tribISSQN 3)' });
  }
  if (tribISSQN === 3 && exportacao && !exportacao.paisResultado) {
    errors.push({ field: 'valores.exportacao.paisResultado', message: 'required for an export (tribISSQN 3)' });
  }
  const tipoImunidade = valores.tipoImunidade ?? null;
  if (tipoImunidade !== null && tribISSQN !== 2) {
    errors.push({ field: 'valores.tipoImunidade', message: 'only for immunity (tribISSQN 2)' });
  }
  if (tribISSQN !== 1 && aliquota > 0) {
    errors.push({
      field: 'valores.aliquotaIss',
      message: 'must be 0 for immunity, export or no incidence (tribISSQN 2, 3, 4)',
    });
  }

  const retido = valores.issRetido === true;
  if (retido) {
    if (tribISSQN !== 1) {
      errors.push({
        field: 'valores.issRetido',
        message: 'immune, export and no-incidence operations do not admit withholding (E0580)',
      });
    }
    if (regime.mei)
      errors.push({ field: 'valores.issRetido', message: 'a MEI provider has no ISS withholding (E0583)' });
    if (serviceCode?.code === '220101') {
      errors.push({ field: 'valores.issRetido', message: 'code 220101 does not admit withholding (E0596)' });
    }
    if (tomador && tomador.id.kind !== 'cnpj' && tomador.id.kind !== 'cpf') {
      errors.push({
        field: 'valores.issRetido',
        message: 'withholding needs a taker identified by CNPJ or CPF (E0204)',
      });
    }
  }

  // --- municipality of incidence and pAliq decision ------------------------------------------------------------------
  const incidencia = serviceCode?.incidence ?? null;
  let municipioIncidencia: string | null = null;
  if (tribISSQN === 1) {
    if (incidencia === 'LP') {
      municipioIncidencia = localPrestacao.kind === 'municipio' ? localPrestacao.codigoMunicipio : null;
    } else if (incidencia === 'ET') {
      municipioIncidencia = tomador?.endereco?.nacional ? tomador.endereco.codigoMunicipio : null;
    } else municipioIncidencia = providerMunicipality;
  }
  const iss = decideIssRate({ regime, tribISSQN, retido, municipioIncidencia });
  if (iss.required && Number.isFinite(aliquota)) {
    if (aliquota <= 0) {
      errors.push({ field: 'valores.aliquotaIss', message: `the ISS rate must be declared here (${iss.rule})` });
    } else if (iss.minimum && aliquota < iss.minimum) {
      errors.push({ field: 'valores.aliquotaIss', message: `minimum ${iss.minimum}% with withholding (${iss.rule})` });
    }
  }

  // --- service groups -----------------------------------------------------------------------------------------------
  const obra = servico.obra ? normalizeObra(servico.obra, errors) : null;
  const evento = servico.evento ? normalizeEvento(servico.evento, errors) : null;

  // --- approximate taxes ----------------------------------------------------------------------------------------------
  const totaisTributos = resolveApproximateTaxes(valores, regime, project, total, errors);

  // --- federal taxes --------------------------------------------------------------------------------------------------
  const federal = resolveFederalTaxes(valores, regime, project, total, errors, notes);

  // --- competencia ----------------------------------------------------------------------------------------------------
  const currentMonth = monthInBrasilia(now);
  const competencia = clean(body.competencia) ?? currentMonth;
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(competencia)) {
    errors.push({ field: 'competencia', message: 'YYYY-MM' });
  } else if (competencia > currentMonth) {
    errors.push({ field: 'competencia', message: 'cannot be a future month (E0015)' });
  } else if (competencia < '2000-01') errors.push({ field: 'competencia', message: 'too old' });

  const referencia = clean(body.referencia);

  // --- IBS/CBS --------------------------------------------------------------------------------------------------------
  const ibs = resolveIbsCbs(body, project, serviceCode?.subitem ?? null, tribISSQN, errors, notes);

  if (errors.length > 0 || !tomador || !serviceCode || !descricao) {
    const result: InvoiceCheckResult = { ok: false, code: INVOICE_ERROR_CODES.validation, errors };
    if (ibs.kind === 'invalid') result.details = { combinations: ibs.combinations };
    return result;
  }
  if (ibs.kind === 'ambiguous') {
    return {
      ok: false,
      code: INVOICE_ERROR_CODES.ambiguous,
      errors: [
        {
          field: 'valores.ibscbs',
          message: `item ${serviceCode.subitem} has ${ibs.combinations.length} possible IBS/CBS framings: send nbs, indicadorOperacao and classificacaoTributaria (or configure the project defaults)`,
        },
      ],
      details: { combinations: ibs.combinations },
    };
  }
  const ibscbs = ibs.kind === 'resolved' ? ibs.value : null;

  return {
    ok: true,
    value: {
      tomador,
      servico: {
        cTribNac: serviceCode.code,
        subitem: serviceCode.subitem,
        descricaoNacional: serviceCode.description,
        descricao,
        codigoTributacaoMunicipal: cTribMun,
        codigoServicoMunicipal: codigoServico,
        nbs: ibscbs?.nbs ?? ibs.nbs,
        cnae,
        localPrestacao,
        incidencia,
        municipioIncidencia,
        obra,
        evento,
        informacoesComplementares: info,
        pedidoCompra,
        documentoReferencia: docRef,
      },
      total: roundMoney(total),
      iss: {
        tribISSQN,
        tipoImunidade,
        retido,
        tpRetISSQN: retido ? 2 : 1,
        aliquota,
        pAliq: iss.declare ? aliquota : null,
        pAliqRule: iss.rule,
        municipioIncidenciaNoEmissorNacional: iss.active,
      },
      exportacao,
      federal,
      totaisTributos,
      ibscbs,
      regime,
      competencia,
      referencia,
      notes,
    },
  };
}

function resolveRegime(
  regimeTributario: RegimeTributario,
  regimeIss: 1 | 2 | 3 | null,
  notes: string[],
): NormalizedRegime {
  const simples = regimeTributario === '3' || regimeTributario === '3e';
  let regApTribSN: 1 | 2 | 3 | null = null;
  if (simples) {
    if (regimeIss) regApTribSN = regimeIss;
    else if (regimeTributario === '3e') {
      regApTribSN = 2;
      notes.push('regApTribSN 2 (ISS outside the DAS) assumed for a Simples provider above the sublimit (3e)');
    } else regApTribSN = 1;
  }
  return {
    regimeTributario,
    opSimpNac: regimeTributario === '1' ? 1 : regimeTributario === '2' ? 2 : 3,
    regApTribSN,
    regEspTrib: 0,
    mei: regimeTributario === '2',
    simples,
  };
}

/**
 * Whether the national DPS declares pAliq, following the Anexo I rules E0600-E0640. "Active" (convênio ativo) is
 * approximated by the national-emitter adhesion list.
 */
function decideIssRate(input: {
  regime: NormalizedRegime;
  tribISSQN: TribIssqn;
  retido: boolean;
  municipioIncidencia: string | null;
}): { declare: boolean; required: boolean; minimum?: number; rule: string; active: boolean } {
  const { regime, tribISSQN, retido, municipioIncidencia } = input;
  const active = municipioIncidencia ? isNationalEmitterMunicipality(municipioIncidencia) : false;
  if (regime.mei) return { declare: false, required: false, rule: 'E0600', active };
  if (tribISSQN !== 1) return { declare: false, required: false, rule: 'E0602', active };
  if (regime.opSimpNac === 1) {
    return active
      ? { declare: false, required: false, rule: 'E0617', active }
      : { declare: true, required: true, rule: 'E0619', active };
  }
  if (regime.regApTribSN === 1) {
    if (retido) return { declare: true, required: true, minimum: 1.8, rule: active ? 'E0621' : 'E0628', active };
    return { declare: false, required: false, rule: active ? 'E0625' : 'E0631', active };
  }
  return active
    ? { declare: false, required: false, rule: 'E0635', active }
    : { declare: true, required: true, rule: 'E0640', active };
}

function normalizeExport(
  raw: NonNullable<InvoiceRequest['valores']['exportacao']>,
  errors: Errors,
): NormalizedExport | null {
  const path = 'valores.exportacao';
  const before = errors.length;
  if (raw.modoPrestacao === undefined) errors.push({ field: `${path}.modoPrestacao`, message: 'required (1 to 4)' });
  else if (![1, 2, 3, 4].includes(raw.modoPrestacao))
    errors.push({ field: `${path}.modoPrestacao`, message: '1 to 4' });
  const vinculo = raw.vinculoPartes ?? 0;
  if (![0, 1, 2, 3, 4, 5, 6].includes(vinculo)) errors.push({ field: `${path}.vinculoPartes`, message: '0 to 6' });
  const moeda = clean(raw.codigoMoeda);
  if (!moeda) errors.push({ field: `${path}.codigoMoeda`, message: 'required: 3-digit central-bank currency code' });
  else if (!/^\d{3}$/.test(moeda)) errors.push({ field: `${path}.codigoMoeda`, message: '3 digits' });
  const valorMoeda = raw.valorServicoMoeda;
  if (valorMoeda === undefined) errors.push({ field: `${path}.valorServicoMoeda`, message: 'required' });
  else if (!(valorMoeda > 0) || !hasAtMostTwoDecimals(valorMoeda)) {
    errors.push({ field: `${path}.valorServicoMoeda`, message: 'greater than 0, at most 2 decimal places' });
  }
  const fomentoPrestador = clean(raw.fomentoPrestador) ?? '01';
  if (!/^0[1-8]$/.test(fomentoPrestador)) {
    errors.push({ field: `${path}.fomentoPrestador`, message: '01 to 08 (00 is not accepted, E0341)' });
  }
  const fomentoTomador = clean(raw.fomentoTomador) ?? '01';
  if (!/^(0[1-9]|1\d|2[0-6])$/.test(fomentoTomador)) {
    errors.push({ field: `${path}.fomentoTomador`, message: '01 to 26 (00 is not accepted, E0343)' });
  }
  const mov = raw.movimentacaoTemporariaBens ?? 1;
  if (![1, 2, 3].includes(mov)) errors.push({ field: `${path}.movimentacaoTemporariaBens`, message: '1, 2 or 3' });
  const di = clean(raw.declaracaoImportacao);
  const re = clean(raw.registroExportacao);
  if (mov === 2 && !di) {
    errors.push({
      field: `${path}.declaracaoImportacao`,
      message: 'required with movimentacaoTemporariaBens 2 (E0352)',
    });
  }
  if (mov === 3 && !re) {
    errors.push({ field: `${path}.registroExportacao`, message: 'required with movimentacaoTemporariaBens 3 (E0356)' });
  }
  if (mov === 1 && (di || re)) {
    errors.push({
      field: di ? `${path}.declaracaoImportacao` : `${path}.registroExportacao`,
      message: 'not allowed with movimentacaoTemporariaBens 1 (E0354)',
    });
  }
  let paisResultado = clean(raw.paisResultado)?.toUpperCase() ?? null;
  if (paisResultado && (!findCountry(paisResultado) || paisResultado === 'BR')) {
    errors.push({ field: `${path}.paisResultado`, message: 'ISO2 code of a country other than BR' });
    paisResultado = null;
  }
  if (errors.length > before) return null;
  return {
    modoPrestacao: raw.modoPrestacao as 1 | 2 | 3 | 4,
    vinculoPartes: vinculo as NormalizedExport['vinculoPartes'],
    codigoMoeda: moeda!,
    valorServicoMoeda: roundMoney(valorMoeda!),
    fomentoPrestador,
    fomentoTomador,
    movimentacaoTemporariaBens: mov as 1 | 2 | 3,
    declaracaoImportacao: mov === 2 ? di : null,
    registroExportacao: mov === 3 ? re : null,
    compartilharMdic: raw.compartilharMdic === true,
    paisResultado,
  };
}

function normalizeObra(raw: NonNullable<InvoiceRequest['servico']['obra']>, errors: Errors): NormalizedObra | null {
  const path = 'servico.obra';
  const before = errors.length;
  const limits: [keyof typeof raw, number][] = [
    ['inscricaoImobiliaria', 30],
    ['codigoObra', 30],
    ['art', 40],
  ];
  for (const [key, max] of limits) {
    const value = clean(raw[key] as string | undefined);
    if (value && value.length > max) errors.push({ field: `${path}.${String(key)}`, message: `max ${max} characters` });
  }
  const cib = clean(raw.codigoCib);
  if (cib && cib.length !== 8) errors.push({ field: `${path}.codigoCib`, message: 'exactly 8 characters' });
  const endereco = normalizeAddress(raw.endereco, `${path}.endereco`, errors);
  const obra = {
    inscricaoImobiliaria: clean(raw.inscricaoImobiliaria),
    codigoObra: clean(raw.codigoObra),
    codigoCib: cib,
    art: clean(raw.art),
    endereco,
  };
  if (!obra.inscricaoImobiliaria && !obra.codigoObra && !obra.codigoCib && !obra.art && !endereco) {
    errors.push({ field: path, message: 'send at least codigoObra, codigoCib or endereco' });
  }
  return errors.length > before ? null : obra;
}

function normalizeEvento(
  raw: NonNullable<InvoiceRequest['servico']['evento']>,
  errors: Errors,
): NormalizedEvento | null {
  const path = 'servico.evento';
  const before = errors.length;
  const nome = clean(raw.nome);
  if (!nome) errors.push({ field: `${path}.nome`, message: 'required' });
  else if (nome.length > 255) errors.push({ field: `${path}.nome`, message: 'max 255 characters' });
  const inicio = clean(raw.dataInicio);
  const fim = clean(raw.dataFim);
  if (!inicio || !isValidDate(inicio))
    errors.push({ field: `${path}.dataInicio`, message: 'required, a valid YYYY-MM-DD date' });
  if (!fim || !isValidDate(fim))
    errors.push({ field: `${path}.dataFim`, message: 'required, a valid YYYY-MM-DD date' });
  else if (inicio && isValidDate(inicio) && fim < inicio) {
    errors.push({ field: `${path}.dataFim`, message: 'cannot be before dataInicio' });
  }
  const id = clean(raw.id);
  if (id && id.length > 30) errors.push({ field: `${path}.id`, message: 'max 30 characters' });
  const endereco = normalizeAddress(raw.endereco, `${path}.endereco`, errors);
  if (errors.length > before) return null;
  return { nome: nome!, dataInicio: inicio!, dataFim: fim!, id, endereco };
}

function resolveApproximateTaxes(
  valores: InvoiceRequest['valores'],
  regime: NormalizedRegime,
  project: ProjectFiscalProfile,
  total: number,
  errors: Errors,
): ApproximateTaxes {
  const raw = valores.totaisTributosAproximados;
  const path = 'valores.totaisTributosAproximados';
  if (raw) {
    const pct = [raw.percentualTributacaoFederal, raw.percentualTributacaoEstadual, raw.percentualTributacaoMunicipal];
    const val = [raw.valorTributacaoFederal, raw.valorTributacaoEstadual, raw.valorTributacaoMunicipal];
    const hasPct = pct.some((v) => v !== undefined);
    const hasVal = val.some((v) => v !== undefined);
    if (hasPct && hasVal) {
      errors.push({ field: path, message: 'send either percentages or amounts, not both' });
    } else if (hasPct) {
      const names = ['percentualTributacaoFederal', 'percentualTributacaoEstadual', 'percentualTributacaoMunicipal'];
      pct.forEach((v, i) => {
        if (v !== undefined && (!(v >= 0 && v <= 100) || !hasAtMostTwoDecimals(v))) {
          errors.push({ field: `${path}.${names[i]}`, message: 'between 0 and 100, at most 2 decimal places' });
        }
      });
      return { kind: 'percentuais', federal: pct[0] ?? 0, estadual: pct[1] ?? 0, municipal: pct[2] ?? 0 };
    } else if (hasVal) {
      const names = ['valorTributacaoFederal', 'valorTributacaoEstadual', 'valorTributacaoMunicipal'];
      val.forEach((v, i) => {
        if (v !== undefined && (!(v >= 0) || !hasAtMostTwoDecimals(v) || v > total)) {
          errors.push({
            field: `${path}.${names[i]}`,
            message: 'between 0 and the service total, at most 2 decimal places (E0702-E0704)',
          });
        }
      });
      return { kind: 'valores', federal: val[0] ?? 0, estadual: val[1] ?? 0, municipal: val[2] ?? 0 };
    }
  }
  if (regime.simples && project.aliquotaSimples !== null && project.aliquotaSimples !== undefined) {
    const rate = roundMoney(project.aliquotaSimples);
    if (rate >= 0 && rate < 100) return { kind: 'simples', percentual: rate };
  }
  return { kind: 'naoInformado' };
}

const PIS_COFINS_NOT_TAXED = new Set(['00', '08', '09']);

function resolveFederalTaxes(
  valores: InvoiceRequest['valores'],
  regime: NormalizedRegime,
  project: ProjectFiscalProfile,
  total: number,
  errors: Errors,
  notes: string[],
): NormalizedFederalTaxes | null {
  const given = ['pisCofins', 'retencaoIrrf', 'retencaoCp', 'retencaoCsll'].filter(
    (k) => valores[k as keyof typeof valores] !== undefined,
  );
  if (regime.mei || regime.simples) {
    if (given.length > 0) {
      notes.push(
        `federal fields ignored for ${regime.mei ? 'MEI' : 'Simples Nacional'}: ${given.map((k) => `valores.${k}`).join(', ')}`,
      );
    }
    return null;
  }
  const retention = (key: 'retencaoIrrf' | 'retencaoCp' | 'retencaoCsll'): number | null => {
    const v = valores[key];
    if (v === undefined) return null;
    if (!(v > 0) || !hasAtMostTwoDecimals(v) || (total > 0 && v >= total)) {
      errors.push({
        field: `valores.${key}`,
        message: 'greater than 0 and less than the service total, at most 2 decimal places (E0699-E0701)',
      });
      return null;
    }
    return roundMoney(v);
  };
  const retencaoIrrf = retention('retencaoIrrf');
  const retencaoCp = retention('retencaoCp');
  const retencaoCsll = retention('retencaoCsll');

  const req = valores.pisCofins;
  const path = 'valores.pisCofins';
  let pisCofins: NormalizedPisCofins | null = null;
  const cstSource = firstDefined<string>(
    [clean(req?.cst), `${path}.cst`],
    [clean(project.cstPisCofins), 'project.cstPisCofins'],
  );
  if (!cstSource) {
    if (req) errors.push({ field: `${path}.cst`, message: 'required: the project has no default cstPisCofins' });
  } else if (!/^\d{2}$/.test(cstSource.value)) {
    errors.push({ field: cstSource.field, message: 'CST of 2 digits' });
  } else {
    const cst = cstSource.value;
    const before = errors.length;
    const rate = (key: 'aliquotaPis' | 'aliquotaCofins', fallback: number | null): number | null => {
      const v = req?.[key] ?? fallback;
      if (v === undefined || v === null) return null;
      if (!(v >= 0 && v < 100) || !hasAtMostTwoDecimals(v)) {
        errors.push({
          field: req?.[key] !== undefined ? `${path}.${key}` : `project.${key}`,
          message: '0 to 99.99 (%)',
        });
        return null;
      }
      return v;
    };
    let baseCalculo: number | null = null;
    let aliquotaPis: number | null = null;
    let aliquotaCofins: number | null = null;
    let valorPis: number | null = null;
    let valorCofins: number | null = null;
    if (PIS_COFINS_NOT_TAXED.has(cst)) {
      if (req?.baseCalculo !== undefined) {
        errors.push({ field: `${path}.baseCalculo`, message: `not allowed with CST ${cst} (E0682)` });
      }
    } else {
      baseCalculo = req?.baseCalculo ?? total;
      if (!(baseCalculo > 0) || baseCalculo > total || !hasAtMostTwoDecimals(baseCalculo)) {
        errors.push({
          field: `${path}.baseCalculo`,
          message: 'greater than 0 and not above the service total (E0677/E0680)',
        });
      }
      aliquotaPis = rate('aliquotaPis', project.aliquotaPis);
      aliquotaCofins = rate('aliquotaCofins', project.aliquotaCofins);
      if (aliquotaPis === null && errors.length === before) {
        errors.push({ field: `${path}.aliquotaPis`, message: `required with CST ${cst} (E0684)` });
      }
      if (aliquotaCofins === null && errors.length === before) {
        errors.push({ field: `${path}.aliquotaCofins`, message: `required with CST ${cst} (E0690)` });
      }
      if ((cst === '04' || cst === '06') && (aliquotaPis || aliquotaCofins)) {
        errors.push({ field: `${path}.aliquotaPis`, message: `CST ${cst} requires zero PIS and COFINS rates (E0688)` });
      }
      const base = baseCalculo;
      valorPis = req?.valorPis ?? (aliquotaPis !== null ? roundMoney((base * aliquotaPis) / 100) : null);
      valorCofins = req?.valorCofins ?? (aliquotaCofins !== null ? roundMoney((base * aliquotaCofins) / 100) : null);
      for (const [key, v] of [
        ['valorPis', req?.valorPis],
        ['valorCofins', req?.valorCofins],
      ] as const) {
        if (v !== undefined && (!(v >= 0) || !hasAtMostTwoDecimals(v))) {
          errors.push({ field: `${path}.${key}`, message: 'not negative, at most 2 decimal places' });
        }
      }
    }
    const tipoRetencao = req?.tipoRetencao ?? project.tipoRetencaoPisCofins ?? 0;
    if (!Number.isInteger(tipoRetencao) || tipoRetencao < 0 || tipoRetencao > 9) {
      errors.push({
        field: req?.tipoRetencao !== undefined ? `${path}.tipoRetencao` : 'project.tipoRetencaoPisCofins',
        message: '0 to 9',
      });
    }
    if (errors.length === before) {
      pisCofins = {
        cst,
        baseCalculo: baseCalculo === null ? null : roundMoney(baseCalculo),
        aliquotaPis,
        aliquotaCofins,
        valorPis,
        valorCofins,
        tipoRetencao,
        source: cstSource.field.startsWith('project') ? 'project' : 'request',
      };
    }
  }
  if (!pisCofins && retencaoIrrf === null && retencaoCp === null && retencaoCsll === null) return null;
  return { pisCofins, retencaoIrrf, retencaoCp, retencaoCsll };
}

type IbsResolution =
  | { kind: 'none'; nbs: string | null }
  | { kind: 'resolved'; value: NormalizedIbsCbs; nbs: string }
  | { kind: 'ambiguous'; combinations: IbsCbsFraming[]; nbs: null }
  | { kind: 'invalid'; combinations: IbsCbsFraming[]; nbs: null };

function resolveIbsCbs(
  body: InvoiceRequest,
  project: ProjectFiscalProfile,
  subitem: string | null,
  tribISSQN: TribIssqn,
  errors: Errors,
  notes: string[],
): IbsResolution {
  const groups: [IbsCbsInput | undefined, string][] = [
    [body.valores?.ibscbs, 'valores.ibscbs'],
    [body.servico?.ibscbs, 'servico.ibscbs'],
  ];
  const before = errors.length;
  const read = <T>(names: (keyof IbsCbsInput)[]) =>
    groups.map(([g, p], rank) => ({ found: readAliased<T>(g, p, names, errors), rank }));

  const collect = (
    names: (keyof IbsCbsInput)[],
    extra: [string | null, string, number][],
    pattern: RegExp,
    what: string,
  ): FixedCode[] => {
    const out: FixedCode[] = [];
    for (const { found, rank } of read<string>(names)) {
      if (found) out.push({ value: String(found.value), field: found.field, rank });
    }
    for (const [value, field, rank] of extra) if (value) out.push({ value, field, rank });
    for (const c of out) {
      if (!pattern.test(c.value)) errors.push({ field: c.field, message: `${what}` });
    }
    return out;
  };
  const nbsAll = collect(
    ['nbs', 'codigoNbs'],
    [
      [clean(body.servico?.nbs), 'servico.nbs', 2],
      [clean(project.defaultNbs), 'project.defaultNbs', 3],
    ],
    /^\d{9}$/,
    'NBS of 9 digits',
  );
  const opAll = collect(
    ['indicadorOperacao', 'cIndOp', 'indOp'],
    [[clean(project.defaultIndicadorOperacao), 'project.defaultIndicadorOperacao', 3]],
    /^\d{6}$/,
    'cIndOp of 6 digits',
  );
  const ctAll = collect(
    ['classificacaoTributaria', 'cClassTrib'],
    [[clean(project.defaultClassificacaoTributaria), 'project.defaultClassificacaoTributaria', 3]],
    /^\d{6}$/,
    'cClassTrib of 6 digits',
  );
  const cstAll = collect(
    ['cst', 'cstIbscbs'],
    [[clean(project.defaultCstIbscbs), 'project.defaultCstIbscbs', 3]],
    /^\d{3}$/,
    'CST of 3 digits',
  );
  const nbs = nbsAll[0];
  // The project defaults describe the domestic operation: they do not frame an export.
  const forExport = (list: FixedCode[]) => (tribISSQN === 3 ? list.filter((c) => c.rank < 3) : list);
  const op = forExport(opAll)[0];
  const ct = forExport(ctAll)[0];
  const cst = forExport(cstAll)[0];
  if (tribISSQN === 3 && [...opAll, ...ctAll, ...cstAll].some((c) => c.rank === 3)) {
    notes.push('project IBS/CBS defaults (cIndOp, cClassTrib, CST) not applied to an export');
  }
  // Codes must exist in their own tables.
  if (nbs && /^\d{9}$/.test(nbs.value) && !isKnownNbs(nbs.value)) {
    errors.push({ field: nbs.field, message: `${nbs.value} is not an NBS 2.0 code (E0316)` });
  }
  if (op && /^\d{6}$/.test(op.value) && !findIndicadorOperacao(op.value)) {
    errors.push({ field: op.field, message: `${op.value} is not in the cIndOp table (Anexo C)` });
  }
  if (ct && /^\d{6}$/.test(ct.value) && !findClassificacaoTributaria(ct.value)) {
    errors.push({ field: ct.field, message: `${ct.value} is not a cClassTrib valid for NFS-e` });
  }
  if (cst && /^\d{3}$/.test(cst.value) && !findCstIbsCbs(cst.value)) {
    errors.push({ field: cst.field, message: `${cst.value} is not an IBS/CBS CST` });
  }

  // Other fields.
  const finalRaw = read<boolean | string | number>(['consumidorFinal', 'indFinal']).find((r) => r.found)?.found;
  const consumidorFinal = finalRaw ? finalRaw.value === true || String(finalRaw.value) === '1' : false;
  if (finalRaw && !['true', 'false', '0', '1'].includes(String(finalRaw.value))) {
    errors.push({ field: finalRaw.field, message: 'true/false or 0/1' });
  }
  const destRaw = read<string | number>(['destinatarioPrincipal', 'indDest']).find((r) => r.found)?.found;
  const indDest = destRaw && String(destRaw.value) === '1' ? 1 : 0;
  if (destRaw && !['0', '1'].includes(String(destRaw.value))) errors.push({ field: destRaw.field, message: '0 or 1' });
  const operRaw = read<string | number>(['tipoOperacao', 'tpOper']).find((r) => r.found)?.found;
  const tipoOperacao = operRaw ? Number(operRaw.value) : null;
  if (operRaw && !(Number.isInteger(tipoOperacao) && tipoOperacao! >= 1 && tipoOperacao! <= 5)) {
    errors.push({ field: operRaw.field, message: '1 to 5' });
  }
  const enteRaw = read<string | number>(['tipoEnteGovernamental', 'enteGovernamental', 'tpEnteGov']).find(
    (r) => r.found,
  )?.found;
  const ente = enteRaw ? Number(enteRaw.value) : null;
  if (enteRaw && ![1, 2, 3, 4, 9].includes(ente!)) errors.push({ field: enteRaw.field, message: '1, 2, 3, 4 or 9' });
  let destinatario: NormalizedParty | null = null;
  const destGroup = groups.find(([g]) => g?.destinatario);
  if (destGroup) {
    destinatario = normalizeParty(destGroup[0]!.destinatario as PartyInput, `${destGroup[1]}.destinatario`, errors);
  }
  if (indDest === 1 && !destGroup) {
    errors.push({
      field: destRaw!.field.replace(/\.[^.]+$/, '.destinatario'),
      message: 'required when the recipient is not the taker (destinatarioPrincipal 1)',
    });
  }
  const anyDetail = finalRaw || destRaw || operRaw || enteRaw || destGroup;
  if (errors.length > before) return { kind: 'invalid', combinations: subitem ? findFramings(subitem) : [], nbs: null };

  const finish = (framing: IbsCbsFraming, sources: { nbs: string; op: string; ct: string }): IbsResolution => {
    const classification = findClassificacaoTributaria(framing.classificacaoTributaria)!;
    let cstValue = classification.cst;
    let cstSource = `table cClassTrib ${framing.classificacaoTributaria}`;
    if (cst && cst.value !== classification.cst) {
      if (cst.rank < 3 || sources.ct.startsWith('project')) {
        errors.push({
          field: cst.field,
          message: `cClassTrib ${framing.classificacaoTributaria} belongs to CST ${classification.cst}, not ${cst.value}`,
        });
        return { kind: 'invalid', combinations: subitem ? findFramings(subitem) : [], nbs: null };
      }
      notes.push(
        `project.defaultCstIbscbs ${cst.value} ignored: cClassTrib ${framing.classificacaoTributaria} (${sources.ct}) belongs to CST ${classification.cst}`,
      );
    } else if (cst) {
      cstValue = cst.value;
      cstSource = cst.field;
    }
    let tipoEnteGovernamental: NormalizedIbsCbs['tipoEnteGovernamental'] = null;
    if (ente === 9) notes.push('tpEnteGov 9 (other) is not in the national XSD: omitted from the DPS');
    else if (ente) tipoEnteGovernamental = ente as 1 | 2 | 3 | 4;
    return {
      kind: 'resolved',
      nbs: framing.nbs,
      value: {
        ...framing,
        cst: cstValue,
        consumidorFinal,
        indDest,
        destinatario,
        tipoOperacao: tipoOperacao as NormalizedIbsCbs['tipoOperacao'],
        tipoEnteGovernamental,
        tipoEnteGovernamentalOutro: ente === 9,
        sources: {
          nbs: sources.nbs,
          indicadorOperacao: sources.op,
          classificacaoTributaria: sources.ct,
          cst: cstSource,
        },
      },
    };
  };

  const covered = subitem !== null && tribISSQN !== 3 && hasFramings(subitem);
  if (!covered) {
    // Export operations (the annex only lists acquirers in Brazil) and items the annex does not cover: the framing
    // cannot be checked against the table, only code by code, and nothing is filled in automatically.
    if (!op && !ct) {
      if (anyDetail || nbs?.rank === 0 || nbs?.rank === 1) {
        errors.push({
          field: 'valores.ibscbs.indicadorOperacao',
          message: 'the IBS/CBS framing cannot be derived here: send indicadorOperacao and classificacaoTributaria',
        });
        return { kind: 'invalid', combinations: [], nbs: null };
      }
      notes.push(
        tribISSQN === 3
          ? 'IBS/CBS group omitted: export without an explicit framing'
          : `IBS/CBS group omitted: item ${subitem} is not in Anexo VIII and no framing was given`,
      );
      return { kind: 'none', nbs: nbs?.value ?? null };
    }
    const missing: string[] = [];
    if (!nbs) missing.push('servico.nbs');
    if (!op) missing.push('valores.ibscbs.indicadorOperacao');
    if (!ct) missing.push('valores.ibscbs.classificacaoTributaria');
    for (const field of missing) {
      errors.push({ field, message: 'required to declare IBS/CBS without a framing from Anexo VIII' });
    }
    if (missing.length > 0) return { kind: 'invalid', combinations: [], nbs: null };
    return finish(
      { nbs: nbs!.value, indicadorOperacao: op!.value, classificacaoTributaria: ct!.value },
      { nbs: nbs!.field, op: op!.field, ct: ct!.field },
    );
  }

  const all = findFramings(subitem);
  // Apply the fixed codes from the highest precedence down; the first one that leaves no framing is the culprit.
  const fixed = [
    ...(nbs ? [{ ...nbs, key: 'nbs' as const }] : []),
    ...(op ? [{ ...op, key: 'indicadorOperacao' as const }] : []),
    ...(ct ? [{ ...ct, key: 'classificacaoTributaria' as const }] : []),
  ].sort((a, b) => a.rank - b.rank);
  let candidates = all;
  const applied: string[] = [];
  for (const f of fixed) {
    const next = candidates.filter((c) => c[f.key] === f.value);
    if (next.length === 0) {
      const others = applied;
      errors.push({
        field: f.field,
        message:
          `${f.value} is not a valid Anexo VIII framing of item ${subitem}` +
          (others.length > 0 ? ` together with ${others.join(', ')}` : ''),
      });
      return { kind: 'invalid', combinations: candidates, nbs: null };
    }
    applied.push(`${f.field} ${f.value}`);
    candidates = next;
  }
  if (candidates.length > 1) return { kind: 'ambiguous', combinations: candidates, nbs: null };
  const framing = candidates[0];
  return finish(framing, {
    nbs: nbs?.field ?? 'table',
    op: op?.field ?? 'table',
    ct: ct?.field ?? 'table',
  });
}
