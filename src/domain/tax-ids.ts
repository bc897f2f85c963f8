// the functions' own modules: the package's index loads every helper it has (about 2 MB of code the process keeps)
import { isValidCnpj } from '@brazilian-utils/brazilian-utils/is-valid-cnpj';
import { isValidCpf } from '@brazilian-utils/brazilian-utils/is-valid-cpf';

/** Strips the mask of a CNPJ/CPF/CEP-like value: keeps digits (and the letters of alphanumeric CNPJs). */
export function onlyDigits(value: string): string {
  return value.replace(/[^0-9]/g, '');
}

/** A CNPJ, formatted or not, with valid check digits. Returns the 14 digits or null. */
export function normalizeCnpj(value: string): string | null {
  const digits = onlyDigits(value);
  if (digits.length !== 14 || !isValidCnpj(digits)) return null;
  if (!/^[0-9./\-\s]+$/.test(value)) return null;
  return digits;
}

/** A CPF, formatted or not, with valid check digits. Returns the 11 digits or null. */
export function normalizeCpf(value: string): string | null {
  const digits = onlyDigits(value);
  if (digits.length !== 11 || !isValidCpf(digits)) return null;
  if (!/^[0-9.\-\s]+$/.test(value)) return null;
  return digits;
}

/** The CNPJ root (first 8 digits) identifies the company; branches share it. */
export function cnpjRoot(cnpj: string): string {
  return onlyDigits(cnpj).slice(0, 8);
}
