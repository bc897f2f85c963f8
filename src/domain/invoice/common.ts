/** Small value helpers shared by the invoice rule modules. */

/** Brasília time, the offset of the national system's timestamps. */
const BRT_OFFSET_MINUTES = -180;

/** Rounds to cents, half away from zero, without binary-float surprises (1.005 → 1.01). */
export function roundMoney(value: number): number {
  const sign = value < 0 ? -1 : 1;
  return (sign * Math.round(Number(`${Math.abs(value)}e2`))) / 100;
}

export function hasAtMostTwoDecimals(value: number): boolean {
  return Math.abs(value * 100 - Math.round(value * 100)) < 1e-6;
}

/** A trimmed string, or null for absent / blank values. */
export function clean(value: string | undefined | null): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

export function isValidDate(value: string): boolean {
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

/** The first candidate with a value, with the field it came from. */
export function firstDefined<T>(...candidates: [T | undefined | null, string][]): { value: T; field: string } | null {
  for (const [value, field] of candidates)
    if (value !== undefined && value !== null && value !== '') return { value, field };
  return null;
}
