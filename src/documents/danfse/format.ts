/** pt-BR display formatting for the DANFSe. Pure functions over the XML's text values. */

const DASH = '-';

/** `10000.5` → `10.000,50` (decimal string, no float rounding surprises). Null for a non-number. */
export function formatDecimal(value: string | null | undefined, fractionDigits = 2): string | null {
  if (value == null) return null;
  const match = /^\s*(-?)(\d*)(?:\.(\d*))?\s*$/.exec(value);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) return null;
  const [, sign, intRaw, fracRaw = ''] = match;
  let intPart = intRaw.replace(/^0+(?=\d)/, '') || '0';
  let frac = fracRaw;
  if (frac.length > fractionDigits) {
    // Round half up on the decimal string.
    const scaled = BigInt(intPart + frac.slice(0, fractionDigits)) + (Number(frac[fractionDigits]) >= 5 ? 1n : 0n);
    const digits = scaled.toString().padStart(fractionDigits + 1, '0');
    intPart = digits.slice(0, digits.length - fractionDigits);
    frac = digits.slice(digits.length - fractionDigits);
  } else {
    frac = frac.padEnd(fractionDigits, '0');
  }
  const grouped = intPart.replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  const isZero = /^0*$/.test(intPart + frac);
  return `${sign && !isZero ? '-' : ''}${grouped}${fractionDigits > 0 ? `,${frac}` : ''}`;
}

/** `1234.5` → `R$ 1.234,50`; absent → `-`. */
export function formatMoney(value: string | null | undefined): string {
  const n = formatDecimal(value);
  return n === null ? DASH : `R$ ${n}`;
}

/** `5.00` → `5,00%`; absent → `-`. */
export function formatPercent(value: string | null | undefined): string {
  const n = formatDecimal(value);
  return n === null ? DASH : `${n}%`;
}

/** Sum of decimal strings (2 decimals), as a decimal string; null when every operand is absent. */
export function sumDecimals(...values: Array<string | null | undefined>): string | null {
  let total = 0n;
  let any = false;
  for (const v of values) {
    const formatted = formatDecimal(v);
    if (formatted === null) continue;
    any = true;
    total += BigInt(formatted.replace(/\./g, '').replace(',', ''));
  }
  if (!any) return null;
  const negative = total < 0n;
  const digits = (negative ? -total : total).toString().padStart(3, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/**
 * `2025-12-30T19:01:35-03:00` → `30/12/2025 19:01:35` (wall-clock time as written in the XML, i.e. the issuer's
 * local time; the process time zone plays no part). Null when not a date-time.
 */
export function formatDateTime(value: string | null | undefined, withSeconds = true): string | null {
  if (!value) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h, mi, s = '00'] = m;
  return `${d}/${mo}/${y} ${h}:${mi}${withSeconds ? `:${s}` : ''}`;
}

/** `2025-12-30` (or a date-time) → `30/12/2025`. */
export function formatDate(value: string | null | undefined): string | null {
  if (!value) return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value.trim());
  return m ? `${m[3]}/${m[2]}/${m[1]}` : null;
}

/** A Date in Brasília time (UTC-03:00, no daylight saving since 2019): `05/01/2026 10:00`. */
export function formatBrasiliaDateTime(date: Date): string {
  const t = new Date(date.getTime() - 3 * 3600_000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(t.getUTCDate())}/${p(t.getUTCMonth() + 1)}/${t.getUTCFullYear()} ${p(t.getUTCHours())}:${p(t.getUTCMinutes())}`;
}

/** CNPJ `00.000.000/0000-00` (numeric or the alphanumeric CNPJ of NT 009); other lengths unchanged. */
export function formatCnpj(value: string): string {
  const v = value.trim().toUpperCase();
  if (!/^[0-9A-Z]{12}\d{2}$/.test(v)) return value;
  return `${v.slice(0, 2)}.${v.slice(2, 5)}.${v.slice(5, 8)}/${v.slice(8, 12)}-${v.slice(12)}`;
}

/** CPF `000.000.000-00`; other lengths unchanged. */
export function formatCpf(value: string): string {
  const v = value.trim();
  if (!/^\d{11}$/.test(v)) return value;
  return `${v.slice(0, 3)}.${v.slice(3, 6)}.${v.slice(6, 9)}-${v.slice(9)}`;
}

/** CEP `00000-000`; other lengths unchanged. */
export function formatCep(value: string): string {
  const v = value.trim();
  if (!/^\d{8}$/.test(v)) return value;
  return `${v.slice(0, 5)}-${v.slice(5)}`;
}

/** Brazilian phone with area code: `(21) 3593-3387`, `(21) 99999-8888`; anything else unchanged. */
export function formatPhone(value: string): string {
  const v = value.replace(/\D/g, '');
  if (v.length === 10) return `(${v.slice(0, 2)}) ${v.slice(2, 6)}-${v.slice(6)}`;
  if (v.length === 11) return `(${v.slice(0, 2)}) ${v.slice(2, 7)}-${v.slice(7)}`;
  return value.trim();
}

/** National taxation code `010101` → `01.01.01`. */
export function formatCodigoTributacaoNacional(value: string): string {
  const v = value.trim();
  return /^\d{6}$/.test(v) ? `${v.slice(0, 2)}.${v.slice(2, 4)}.${v.slice(4)}` : v;
}

/** NBS `115021000` → `1.1502.10.00`. */
export function formatNbs(value: string): string {
  const v = value.trim();
  return /^\d{9}$/.test(v) ? `${v.slice(0, 1)}.${v.slice(1, 5)}.${v.slice(5, 7)}.${v.slice(7)}` : v;
}
