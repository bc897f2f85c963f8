/** Brasília time (UTC−03:00, no daylight saving since 2019), as Sefin Nacional writes its timestamps. */

const OFFSET_MS = -3 * 60 * 60 * 1000;

function shifted(date: Date): string {
  return new Date(date.getTime() + OFFSET_MS).toISOString();
}

/** `AAAA-MM-DDThh:mm:ss-03:00` (XSD TSDateTimeUTC: no fraction, offset required), e.g. dhProc. */
export function brasiliaDateTime(date: Date): string {
  return `${shifted(date).slice(0, 19)}-03:00`;
}

/** With milliseconds, as the API's `dataHoraProcessamento`. */
export function brasiliaDateTimeMillis(date: Date): string {
  return `${shifted(date).slice(0, 23)}-03:00`;
}

/** `AAMM` of the access key. */
export function brasiliaYearMonth(date: Date): string {
  const iso = shifted(date);
  return iso.slice(2, 4) + iso.slice(5, 7);
}
