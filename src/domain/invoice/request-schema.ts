import { type Static, Type } from 'typebox';

// ---------------------------------------------------------------------------------------------------------------
// Request schema (spec 2.7). It generates the OpenAPI document: every property carries a description. Unknown
// properties are allowed (aliases, forward compatibility). What a schema cannot say is in checkInvoiceRequest.
// ---------------------------------------------------------------------------------------------------------------

/** Largest amount accepted: cents stay exact in a double well beyond it (the XSD allows 15 integer digits). */
export const MAX_MONEY = 99_999_999_999.99;

const str = (description: string, options: Record<string, unknown> = {}) => Type.String({ description, ...options });
const opt = <T extends Parameters<typeof Type.Optional>[0]>(schema: T) => Type.Optional(schema);
const DATE = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$';
const CODE6 = '^\\d{6}$';

export const EnderecoSchema = Type.Object(
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

export const PartySchema = {
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

export const IbsCbsSchema = Type.Object(
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
          description:
            'ISS rate in %. Taxable operations (tribISSQN 1): the statutory bounds 2 to 5 (LC 116/2003 art. 8 and 8-A; subitems 7.02, 7.05 and 16.01 may go below 2), checked before a number is spent with the government rejection code (E0429/E1297, E0595); Simples ME/EPP with withholding: at least 1.8 (E0621/E0628). 0 for immunity, export or no incidence. A number: strings, booleans, null and arrays are refused.',
          minimum: 0,
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

export type EnderecoInput = Static<typeof EnderecoSchema>;
export type IbsCbsInput = Static<typeof IbsCbsSchema>;
