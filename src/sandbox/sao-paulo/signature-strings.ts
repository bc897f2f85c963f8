import { createVerify, type X509Certificate } from 'node:crypto';
import { child, textAt } from '../kit/xml-dom.ts';

/**
 * The sandbox's own reading of São Paulo's signature strings (manual v3.3.5 pp. 46–48 and §4.3.10), recomposed from
 * the received RPS and checked with the sender's public key. Sandbox code: it never imports the engine's builder.
 */

const cents15 = (value: string | undefined) => String(Math.round(Number(value ?? '0') * 100)).padStart(15, '0');

/** The v2 RPS string (CCM 12, série 5, number 12, date, T/S/ISS, ValorFinalCobrado, deduções, code, taker). */
export function rpsStringOf(rps: Element): string {
  const tomador = child(rps, 'CPFCNPJTomador');
  let indicator = '3';
  let document = '0'.repeat(14);
  let suffix = '';
  const cpf = textAt(tomador, 'CPF');
  const cnpj = textAt(tomador, 'CNPJ');
  const nif = textAt(tomador, 'NIF');
  const naoNif = textAt(tomador, 'NaoNIF');
  if (cpf) [indicator, document] = ['1', cpf.padStart(14, '0')];
  else if (cnpj) [indicator, document] = ['2', cnpj.padStart(14, '0')];
  else if (nif !== undefined) [indicator, suffix] = ['4', nif.trim()];
  else if (naoNif !== undefined) [indicator, suffix] = ['4', naoNif.trim()];
  const intermediario = child(rps, 'CPFCNPJIntermediario');
  const intermediary = intermediario
    ? `1${(textAt(intermediario, 'CNPJ') ?? textAt(intermediario, 'CPF') ?? '').padStart(14, '0')}${textAt(rps, 'ISSRetidoIntermediario') === 'true' ? 'S' : 'N'}`
    : '';
  return (
    (textAt(rps, 'ChaveRPS/InscricaoPrestador') ?? '').padStart(12, '0') +
    (textAt(rps, 'ChaveRPS/SerieRPS') ?? '').padEnd(5, ' ') +
    (textAt(rps, 'ChaveRPS/NumeroRPS') ?? '').padStart(12, '0') +
    (textAt(rps, 'DataEmissao') ?? '').replaceAll('-', '') +
    (textAt(rps, 'TributacaoRPS') ?? '') +
    (textAt(rps, 'StatusRPS') ?? '') +
    (textAt(rps, 'ISSRetido') === 'true' ? 'S' : 'N') +
    cents15(textAt(rps, 'ValorFinalCobrado') ?? textAt(rps, 'ValorInicialCobrado')) +
    cents15(textAt(rps, 'ValorDeducoes')) +
    (textAt(rps, 'CodigoServico') ?? '').padStart(5, '0') +
    indicator +
    document +
    intermediary +
    suffix
  );
}

/** The cancellation string: CCM 8 digits + NF-e number 12 digits. */
export function cancellationStringOf(detalhe: Element): string {
  return (
    (textAt(detalhe, 'ChaveNFe/InscricaoPrestador') ?? '').padStart(8, '0') +
    (textAt(detalhe, 'ChaveNFe/NumeroNFe') ?? '').padStart(12, '0')
  );
}

/** RSA-SHA1 of the ASCII string, base64, against the certificate's public key. */
export function stringSignatureVerifies(
  value: string,
  base64: string | undefined,
  certificate: X509Certificate,
): boolean {
  if (!base64) return false;
  try {
    return createVerify('RSA-SHA1').update(value, 'ascii').verify(certificate.publicKey, base64.trim(), 'base64');
  } catch {
    return false;
  }
}
