import type { Static } from 'typebox';
import type { InvoiceRequestSchema } from '../../../domain/invoice-request.ts';
import type { Warning } from '../../../domain/warnings.ts';

/** Values the OpenAPI examples of the issuing routes share (POST /emitir, POST /emitir/batch, the invoice status). */

/** The invoice of the examples: a company taker in Curitiba, a monthly support service. */
export const INVOICE_REQUEST_EXAMPLE: Static<typeof InvoiceRequestSchema> = {
  tomador: {
    cnpj: '45789123000191',
    nome: 'Mercado Boa Vista Ltda',
    email: 'contasapagar@mercadoboavista.com.br',
    endereco: {
      logradouro: 'Avenida Sete de Setembro',
      numero: '3165',
      bairro: 'Rebouças',
      cidade: 'Curitiba',
      uf: 'PR',
      cep: '80230010',
    },
  },
  servico: {
    descricao: 'Suporte técnico mensal ao sistema de frente de caixa - novembro/2026',
    codigo: '010701',
  },
  valores: { total: 1850, aliquotaIss: 2 },
  competencia: '2026-11',
  referencia: 'PED-2026-004518',
};

/** The warning the service gives such an invoice of a Simples Nacional provider in 2026. */
export const IBSCBS_OMITTED_WARNING_EXAMPLE: Warning = {
  code: 'IBSCBS_GROUP_OMITTED',
  field: 'valores.ibscbs',
  message:
    'IBS/CBS group omitted: no IBS/CBS data was sent and the provider is not obliged to declare it for this competência (the 2026 test rates of IBS/CBS do not apply to Simples Nacional (incl. MEI and sublimit excess) operations; LC 214/2025 art. 348, III, c (facts of 1 Jan to 31 Dec 2026); LC 214/2025 art. 517 gives the sublimit rules effect from 2027)',
};
