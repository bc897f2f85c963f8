function pad2(value: number): string {
  return value < 10 ? '0' + value : String(value);
}

/**
 * Formats an instant as `AAAA-MM-DDThh:mm:ss±hh:mm` (schema type TSDateTimeUTC: no fractional seconds, offset
 * required) in the given UTC offset, e.g. -180 for Brasília. The instant is preserved: only its representation
 * changes. The national schema accepts whole-hour offsets between -11:00 and +12:00.
 */
export function formatDateTimeWithOffset(date: Date, offsetMinutes: number): string {
  const time = date.getTime();
  if (Number.isNaN(time)) throw new Error('formatDateTimeWithOffset: invalid date');
  if (!Number.isInteger(offsetMinutes) || offsetMinutes < -720 || offsetMinutes > 840) {
    throw new Error(`formatDateTimeWithOffset: invalid offset ${offsetMinutes}`);
  }
  const local = new Date(time + offsetMinutes * 60_000);
  const year = local.getUTCFullYear();
  if (year < 1000 || year > 9999) throw new Error('formatDateTimeWithOffset: year out of range');
  const sign = offsetMinutes < 0 ? '-' : '+';
  const absolute = Math.abs(offsetMinutes);
  return (
    `${year}-${pad2(local.getUTCMonth() + 1)}-${pad2(local.getUTCDate())}` +
    `T${pad2(local.getUTCHours())}:${pad2(local.getUTCMinutes())}:${pad2(local.getUTCSeconds())}` +
    `${sign}${pad2(Math.floor(absolute / 60))}:${pad2(absolute % 60)}`
  );
}
