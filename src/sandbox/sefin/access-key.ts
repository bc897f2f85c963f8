import { randomInt } from 'node:crypto';

/**
 * The NFS-e access key (chave de acesso), 50 digits (brief §2.5; XSD TSIdNFSe):
 * cMun emissor (7) + ambGer (1) + tpInsc (1) + inscrição federal (14) + nNFSe (13) + AAMM (4) + código (9) + DV (1).
 */

/** Modulo 11 check digit with weights 2..9 from right to left; a remainder below 2 gives 0. */
export function accessKeyCheckDigit(first49: string): number {
  if (!/^[0-9]{49}$/.test(first49)) throw new Error('the access key body must be 49 digits');
  let sum = 0;
  let weight = 2;
  for (let i = first49.length - 1; i >= 0; i--) {
    sum += Number(first49[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const remainder = sum % 11;
  return remainder < 2 ? 0 : 11 - remainder;
}

export function isValidAccessKey(key: string): boolean {
  return /^[0-9]{50}$/.test(key) && accessKeyCheckDigit(key.slice(0, 49)) === Number(key[49]);
}

export interface AccessKeyParts {
  cMun: string;
  ambGer: 1 | 2;
  /** 1 CPF, 2 CNPJ. */
  tpInsc: 1 | 2;
  /** CNPJ (14) or CPF (11, left-padded to 14 with zeros). */
  inscricao: string;
  nNFSe: number;
  /** Year and month of emission, `AAMM`. */
  aamm: string;
  /** The 9-digit numeric code; random when absent. */
  codigo?: string;
}

export function buildAccessKey(parts: AccessKeyParts): string {
  const codigo = parts.codigo ?? String(randomInt(0, 1_000_000_000)).padStart(9, '0');
  const body =
    parts.cMun +
    String(parts.ambGer) +
    String(parts.tpInsc) +
    parts.inscricao.padStart(14, '0') +
    String(parts.nNFSe).padStart(13, '0') +
    parts.aamm +
    codigo;
  if (!/^[0-9]{49}$/.test(body)) throw new Error(`access key parts do not make 49 digits: ${body}`);
  return body + String(accessKeyCheckDigit(body));
}
