import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../client.ts';
import { numbering } from '../schema.ts';

export const NUMBERING_KINDS = ['nfse', 'nfe', 'nfce'] as const;
export type NumberingKind = (typeof NUMBERING_KINDS)[number];
export type LastNumbers = Record<NumberingKind, number>;

/** The last used number per document kind; the rows are created lazily, starting at 0. */
export async function readLastNumbers(db: DbOrTx, projectId: string): Promise<LastNumbers> {
  await db
    .insert(numbering)
    .values(NUMBERING_KINDS.map((kind) => ({ projectId, kind, lastNumber: 0 })))
    .onConflictDoNothing();
  const rows = await db.select().from(numbering).where(eq(numbering.projectId, projectId));
  const out: LastNumbers = { nfse: 0, nfe: 0, nfce: 0 };
  for (const row of rows) {
    if ((NUMBERING_KINDS as readonly string[]).includes(row.kind)) out[row.kind as NumberingKind] = row.lastNumber;
  }
  return out;
}

/**
 * Rule 4.1.1: numbers never decrease. Each submitted value is merged with `greatest`, so a value lower than
 * the current one is ignored and concurrent raises keep the larger one. Returns the effective values.
 */
export async function raiseLastNumbers(
  db: DbOrTx,
  projectId: string,
  values: Partial<LastNumbers>,
): Promise<LastNumbers> {
  const rows = NUMBERING_KINDS.filter((kind) => values[kind] !== undefined).map((kind) => ({
    projectId,
    kind,
    lastNumber: values[kind]!,
  }));
  if (rows.length > 0) {
    await db
      .insert(numbering)
      .values(rows)
      .onConflictDoUpdate({
        target: [numbering.projectId, numbering.kind],
        set: { lastNumber: sql`greatest(${numbering.lastNumber}, excluded.last_number)` },
      });
  }
  return readLastNumbers(db, projectId);
}
