import type { RegimeTributario } from './project-profile.ts';

/**
 * The fiscal calendar: who must declare the IBS/CBS group of the national DPS (infDPS/IBSCBS) for a competência.
 * Kept as data: one row per period and set of regimes, each with its source. The first matching row wins; a
 * competência after every row is treated as obliged (the spec's rule: the framing must resolve or 400).
 *
 * "Obliged" only decides what happens when the caller and the project give no IBS/CBS datum at all: obliged →
 * the framing is resolved from Anexo VIII (400 IBSCBS_FRAMING_AMBIGUOUS when it has several); not obliged → the
 * note is issued without the group and the response says so (warning IBSCBS_GROUP_OMITTED). Any IBS/CBS datum
 * in the request or the project defaults always makes the framing resolve, whatever the calendar says.
 */
export interface FiscalCalendarRow {
  /** First competência of the period, YYYY-MM (inclusive). */
  from: string;
  /** Last competência of the period, YYYY-MM (inclusive). */
  until: string;
  regimes: readonly RegimeTributario[];
  obliged: boolean;
  /** Why: the rule in words. */
  rule: string;
  /** Document and section the rule comes from; `secondhand` when only a report of it was found. */
  source: string;
}

export const IBSCBS_CALENDAR: readonly FiscalCalendarRow[] = [
  {
    from: '2000-01',
    until: '2025-12',
    regimes: ['1', '2', '3', '3e'],
    obliged: false,
    rule: 'IBS and CBS do not exist before 2026: the group cannot be due',
    source:
      'EC 132/2023, ADCT art. 125 (2026 is the first year of IBS/CBS, at test rates); LC 214/2025 art. 343 and 346',
  },
  {
    from: '2026-01',
    until: '2026-12',
    regimes: ['2', '3', '3e'],
    obliged: false,
    rule: 'the 2026 test rates of IBS/CBS do not apply to Simples Nacional (incl. MEI and sublimit excess) operations',
    source:
      'LC 214/2025 art. 348, III, c (facts of 1 Jan to 31 Dec 2026); LC 214/2025 art. 517 gives the sublimit rules effect from 2027',
  },
  {
    from: '2026-01',
    until: '2026-07',
    regimes: ['1'],
    obliged: false,
    rule: 'regime 1: the IBSCBS group of the national layout (NT 004/005) is optional before the mandatory date',
    source:
      'NT 005 SE/CGNFS-e v1.1 (19/11/2025), IBSCBS group of the DPS; mandatory date of 03/08/2026 per brief national-standard.md §2.4 timeline (secondhand, [WATCH] 2026-08-24)',
  },
  {
    from: '2026-08',
    until: '2026-12',
    regimes: ['1'],
    obliged: true,
    rule: 'regime 1: the IBSCBS group is mandatory since 03/08/2026 (its absence does not reject until 31/12/2026)',
    source:
      'CGNFS-e orientation of 07/08/2026 as reported in brief national-standard.md §2.4 timeline (secondhand, [WATCH] 2026-08-24); LC 214/2025 art. 343 and 346',
  },
];

export interface IbsCbsObligation {
  obliged: boolean;
  row: FiscalCalendarRow | null;
}

/** Whether a provider of `regime` must declare the IBS/CBS group for `competencia` (YYYY-MM). */
export function ibsCbsObligation(regime: RegimeTributario, competencia: string): IbsCbsObligation {
  const row = IBSCBS_CALENDAR.find(
    (r) => r.regimes.includes(regime) && competencia >= r.from && competencia <= r.until,
  );
  return row ? { obliged: row.obliged, row } : { obliged: true, row: null };
}
