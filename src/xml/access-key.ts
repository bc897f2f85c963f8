/**
 * The NFS-e access key (chave de acesso, XSD `TSIdNFSe`), 50 digits: cMun emissor (7) + ambGer (1) + tpInsc (1) +
 * inscrição federal (14) + nNFSe (13) + AAMM (4) + código (9) + DV (1). `infNFSe/@Id` is `NFS` + the key.
 * (The Sefin sandbox, which plays the government, builds its keys with its own code: `sandbox/sefin/access-key.ts`.)
 */

/** Modulo-11 check digit of the first 49 digits (weights 2..9 from the right; a remainder below 2 gives 0). */
export function accessKeyCheckDigit(first49: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = first49.length - 1; i >= 0; i--) {
    sum += Number(first49[i]) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const remainder = sum % 11;
  return remainder < 2 ? 0 : 11 - remainder;
}

/** 50 digits whose last one is the check digit of the others. */
export function isValidAccessKey(key: string): boolean {
  return /^\d{50}$/.test(key) && accessKeyCheckDigit(key.slice(0, 49)) === Number(key[49]);
}
