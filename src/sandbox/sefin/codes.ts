/**
 * Official error codes and messages the sandbox answers with, copied from the official annexes:
 * - Anexo I (RN DPS_NFS-e), v1.00 20251216, also in `codigos_erro_regras_negocio_anexos_I_II_VI.csv`;
 * - Anexo IV (RN_RECEPCAO_LOTE_DF-e): the reception rules (certificate, base64/gzip, XML, schema), which Anexo I
 *   lists without codes in its RN_RECEPCAO_DPS sheet; Sefin answers them with these codes (e.g. E1235);
 * - Anexo II (RN EVENTO_PED.REG.EVENTO), v1.00 20251216: events.
 */
export const SEFIN_MESSAGES = {
  // Reception (Anexo IV; the same rules as Anexo I RN_RECEPCAO_DPS)
  E1200: 'Certificado de Transmissão Inválido',
  E1203: 'Certificado de Transmissão expirado',
  E1209: 'Certificado de Transmissão sem CNPJ',
  E1225: 'Falha na decodificação da base 64 da área de dados',
  E1226: 'Estrutura descompactada mal formada.',
  E1228: 'Uso de prefixo de namespace não permitido na área de dados descompactada.',
  E1229: 'XML não está utilizando codificação UTF8.',
  E1235: 'Falha no esquema XML do DF-e.',
  E1242: 'Tipo DF-e não tratado pelo Sistema Nacional NFS-e.',
  // DPS (Anexo I)
  E0004: 'Conteúdo do identificador informado na DPS difere da concatenação dos campos correspondentes.',
  E0006: 'Ambiente informado diverge do ambiente de recebimento para o qual o emitente enviou a DPS.',
  E0008:
    'A data e hora de emissão da DPS deve ser anterior ou igual à data do seu processamento (dhProc) pelo Sistema Nacional NFS-e.',
  E0010: 'A série informada na DPS não pertence à faixa definida para o tipo de emissor utilizado para a sua emissão.',
  E0014:
    'Conjunto de Série, Número, Código do Município Emissor e CNPJ/CPF informado nesta DPS já existe em uma NFS-e gerada a partir de uma DPS enviada anteriormente.',
  E0015: 'A data de competência informada na DPS não pode ser posterior à data de emissão (dhEmi) da DPS.',
  E0037:
    'O código do município emissor informado na DPS é inexistente no cadastro de convênio municipal do sistema nacional.',
  E0190: 'CNPJ do tomador não encontrado no cadastro CNPJ.',
  E0207: 'CPF do tomador não encontrado no cadastro CPF.',
  E0314:
    'O código de tributação municipal informado não existe ou não está administrado pelo município de incidência do ISSQN na data de competência informada na DPS,',
  E0714: 'Arquivo enviado com erro na assinatura.',
  E0715: 'Certificado Digital da assinatura inválido.',
  E0716: 'Certificado Digital fora do padrão estabelecido.',
  E0717: 'A assinatura é obrigatória quando for enviado para o Web Service.',
  E0718: 'A assinatura deve ser feita com o certificado digital do emitente da DPS.',
  // Events (Anexo II)
  E0812:
    'O CNPJ do autor do pedido de registro de evento não corresponde à base do CNPJ informada no certificado digital da assinatura do pedido.',
  E0813:
    'O CNPJ autor informado no pedido de registro de evento não corresponde ao "AUTOR DO PEDIDO DE REGISTRO DE EVENTO" indicado na planilha "Tipo Eventos".',
  E0815:
    'O CPF do autor do pedido de registro de evento não corresponde ao CPF informado no certificado digital da assinatura do pedido.',
  E0816:
    'O CPF autor informado no pedido de registro de evento não corresponde ao "AUTOR DO PEDIDO DE REGISTRO DE EVENTO" indicado na planilha "Tipo Eventos".',
  E0831:
    'O pedido de registro deste evento de NFS-e deve ser enviado para o ambiente que gerou a NFS-e referenciada no pedido.',
  E0840:
    'O Sistema Nacional NFS-e não pode recepecionar o EVENTO DE CANCELAMENTO DE NFS-e pois, o evento de <nome_evento_vinculado_a_NFS-e> já está vinculado à NFS-e indicada no evento enviado, impedindo sua recepção.',
  E1827:
    'Conteúdo do identificador informado no identificador do Pedido de Registro de Evento difere da concatenação dos campos correspondentes.',
  E1831:
    'O pedido de registro de evento não pode ser validado pois a NFS-e indicada não existe no Ambiente de Dados Nacional NFS-e.',
  E1843:
    'A data de emissão do pedido do registro do evento não pode ser posterior à data de recebimento pelo Sistema Nacional NFS-e.',
  E1845: 'Ambiente informado diverge do ambiente de recebimento para o qual o emitente está enviando o evento.',
  E1980: 'Arquivo enviado com erro na assinatura.',
  E1983: 'Certificado Digital da assinatura inválido.',
  E1986: 'Certificado Digital fora do padrão estabelecido.',
  E1989: 'A assinatura é obrigatória quando for enviado para o Web Service.',
} as const;

export type SefinCode = keyof typeof SEFIN_MESSAGES;

/** `MensagemProcessamento` of the official API (camelCase, as in the Swagger definitions). */
export interface MensagemProcessamento {
  codigo: string;
  descricao: string;
  complemento?: string;
}

export function officialMessage(code: SefinCode, complemento?: string): MensagemProcessamento {
  return complemento === undefined
    ? { codigo: code, descricao: SEFIN_MESSAGES[code] }
    : { codigo: code, descricao: SEFIN_MESSAGES[code], complemento };
}

/**
 * Texts of the HTTP answers that carry no business-rule code in the official material (they come from the
 * response descriptions of the official Swagger). The sandbox puts the HTTP status in `codigo` for them.
 */
export const HTTP_MESSAGES = {
  noClientCertificate: 'Não foi possível obter o certificado de cliente.',
  nfseForbidden: 'Consulta desta NFS-e não é permitida para este usuário.',
  nfseNotFound: 'Chave de acesso não encontrada.',
  badAccessKey: 'A chave de acesso consultada deve conter 50 números.',
  badDpsId: 'Identificador de DPS inválido',
  dpsNotFound: 'Não foi gerada uma NFS-e com o identificador de DPS informado',
  eventsForbidden: 'Usuário não tem permissão para acessar os eventos',
  eventsNotFound: 'Nenhum evento encontrado para a NFS-e',
  eventsBadRequest: 'A requisição violou alguma regra de negócio',
  processingFailure: 'Falha durante o processamento do DPS',
  routeNotFound: 'Recurso não encontrado.',
} as const;

export function httpMessage(
  status: number,
  key: keyof typeof HTTP_MESSAGES,
  complemento?: string,
): MensagemProcessamento {
  return complemento === undefined
    ? { codigo: String(status), descricao: HTTP_MESSAGES[key] }
    : { codigo: String(status), descricao: HTTP_MESSAGES[key], complemento };
}
