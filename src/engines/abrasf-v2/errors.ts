import type { AbrasfProviderConfig } from './config.ts';

/**
 * The error normaliser's table: the codes of the official ABRASF table (Erros_e_Alertas_NFS-e_2.03.xls, final sheet;
 * shared/reference/providers/abrasf/derived/erros_e_alertas_2.03.csv) whose meaning changes what the engine does.
 * Every other `E…` code is a business refusal kept as the provider sent it; `A…` codes are alerts and never errors.
 * Derived, compact: the code, the official message, and the engine's reading.
 */
export type CodeClass = 'alreadyProcessed' | 'alreadyCancelled' | 'stillProcessing' | 'notFound' | 'protocolUnknown';

export const OFFICIAL_CODES: Record<string, { mensagem: string; reading: CodeClass }> = {
  E4: { mensagem: 'Esse RPS não foi encontrado em nossa base de dados.', reading: 'notFound' },
  E10: { mensagem: 'RPS já informado.', reading: 'alreadyProcessed' },
  E79: { mensagem: 'NFS-e já está cancelada.', reading: 'alreadyCancelled' },
  E86: {
    mensagem: 'Número do protocolo de recebimento do lote inexistente na base de dados.',
    reading: 'protocolUnknown',
  },
  E87: { mensagem: 'Número de lote inexistente na base de dados.', reading: 'protocolUnknown' },
  E89: {
    mensagem: 'Não existe na base de dados uma NFS-e emitida para o número de RPS informado.',
    reading: 'notFound',
  },
  E92: { mensagem: 'RPS ainda não convertido em NFS-e.', reading: 'stillProcessing' },
  E178: { mensagem: 'Lote aguardando processamento.', reading: 'stillProcessing' },
  E212: { mensagem: 'NFS-e não encontrada.', reading: 'notFound' },
};

/** How the engine reads a provider code: the provider's own lists first, then the official table. */
export function classifyCode(config: AbrasfProviderConfig, code: string): CodeClass | null {
  const extra = config.codes ?? {};
  if (extra.alreadyProcessed?.includes(code)) return 'alreadyProcessed';
  if (extra.alreadyCancelled?.includes(code)) return 'alreadyCancelled';
  if (extra.stillProcessing?.includes(code)) return 'stillProcessing';
  if (extra.notFound?.includes(code)) return 'notFound';
  return OFFICIAL_CODES[code]?.reading ?? null;
}

/** The codes of a class for a provider (what the kit's `alreadyProcessedCodes` / `alreadyCancelledCodes` hold). */
export function codesOf(config: AbrasfProviderConfig, kind: CodeClass): string[] {
  const official = Object.entries(OFFICIAL_CODES)
    .filter(([, v]) => v.reading === kind)
    .map(([code]) => code);
  const extra = config.codes?.[kind as keyof NonNullable<AbrasfProviderConfig['codes']>] ?? [];
  return [...new Set([...official, ...extra])];
}
