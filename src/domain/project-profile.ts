/**
 * The fiscal data of a project (spec 2.1) that the engines need to build a document. The database row
 * maps onto this shape; the engines never see write-only secrets other than through the certificate.
 */
export interface ProjectAddress {
  logradouro: string | null;
  numero: string | null;
  complemento: string | null;
  bairro: string | null;
  cidade: string | null;
  uf: string | null;
  cep: string | null;
}

export type RegimeTributario = '1' | '2' | '3' | '3e';

export interface ProjectFiscalProfile {
  id: string;
  cnpj: string;
  razaoSocial: string;
  inscricaoMunicipal: string | null;
  codigoMunicipio: string | null;
  regimeTributario: RegimeTributario | null;
  /** 1 ISS inside the DAS, 2 ISS separate, 3 both separate (regApTribSN). */
  regimeIss: 1 | 2 | 3 | null;
  email: string | null;
  telefone: string | null;
  endereco: ProjectAddress | null;
  codigoTributacao: string | null;
  tributacaoIss: 1 | 2 | 3 | 4 | null;
  serieNfse: string;
  aliquotaSimples: number | null;
  cnae: string | null;
  /** 1 production, 2 homologation. */
  ambiente: 1 | 2;
  cstPisCofins: string | null;
  aliquotaPis: number | null;
  aliquotaCofins: number | null;
  tipoRetencaoPisCofins: number | null;
  defaultCstIbscbs: string | null;
  defaultClassificacaoTributaria: string | null;
  defaultIndicadorOperacao: string | null;
  defaultNbs: string | null;
  codigoServicoSp: string | null;
}
