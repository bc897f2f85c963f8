import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate } from 'drizzle-orm/pglite/migrator';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Migration 0005 (engine-owned reference, issue 10): a database of the previous schema holding issued, cancelled and
 * in-flight notes migrates without loss. The database is first migrated with the migrations up to 0004 only (a copy
 * of the folder whose journal stops there), filled, then migrated with the real folder.
 */
const migrations = fileURLToPath(new URL('../../src/db/migrations', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'migration-0005-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function foldersUpTo(tag: string): string {
  const folder = join(work, 'up-to');
  cpSync(migrations, folder, { recursive: true });
  const journalPath = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: { tag: string }[] };
  const last = journal.entries.findIndex((e) => e.tag === tag);
  expect(last).toBeGreaterThanOrEqual(0);
  journal.entries = journal.entries.slice(0, last + 1);
  writeFileSync(journalPath, JSON.stringify(journal));
  return folder;
}

describe('migration 0005_engine_reference', () => {
  it('keeps every issued, cancelled and in-flight note, under the new column names', async () => {
    const client = new PGlite();
    const db = drizzle(client);
    await migrate(db, { migrationsFolder: foldersUpTo('0004_warnings_limits_domains_adn_parameters') });

    const org = '11111111-1111-4111-8111-111111111111';
    const project = '22222222-2222-4222-8222-222222222222';
    const plan = (await client.query<{ slug: string }>('select slug from plans limit 1')).rows[0]!.slug;
    await client.query('insert into organizations (id, name, slug, plan_slug) values ($1, $2, $3, $4)', [
      org,
      'Org',
      'org',
      plan,
    ]);
    await client.query('insert into projects (id, org_id, name, cnpj, razao_social) values ($1, $2, $3, $4, $5)', [
      project,
      org,
      'P',
      '11222333000181',
      'P LTDA',
    ]);
    const key = '4'.repeat(50);
    const rows = [
      // issued
      ['a0000000-0000-4000-8000-000000000001', 'issued', 'done', 1, 'DPS1', '<DPS>1</DPS>', key, '1', '<NFSe/>'],
      // cancelled
      [
        'a0000000-0000-4000-8000-000000000002',
        'cancelled',
        'done',
        2,
        'DPS2',
        '<DPS>2</DPS>',
        '5'.repeat(50),
        '2',
        '<NFSe/>',
      ],
      // in flight: sent, answer lost
      ['a0000000-0000-4000-8000-000000000003', 'processing', 'sending', 3, 'DPS3', '<DPS>3</DPS>', null, null, null],
      // queued, nothing taken yet
      ['a0000000-0000-4000-8000-000000000004', 'queued', 'none', null, null, null, null, null, null],
    ] as const;
    for (const [id, status, transmission, n, dpsId, dpsXml, ch, numero, nfseXml] of rows) {
      await client.query(
        `insert into invoices (id, project_id, org_id, status, engine, request, ambiente, serie, n_dps, dps_id, dps_xml,
           transmission, ch_nfse, numero_nfse, nfse_xml)
         values ($1, $2, $3, $4, 'national', '{"servico":{}}', 2, '1', $5, $6, $7, $8, $9, $10, $11)`,
        [id, project, org, status, n, dpsId, dpsXml, transmission, ch, numero, nfseXml],
      );
    }

    await migrate(db, { migrationsFolder: migrations });

    const after = await client.query<Record<string, unknown>>(
      `select id, status, transmission, declaration_number, declaration_id, declaration_xml, access_key, numero_nfse,
         nfse_xml, protocol, verification_code from invoices order by id`,
    );
    expect(after.rows).toHaveLength(rows.length);
    for (const [i, [id, status, transmission, n, dpsId, dpsXml, ch, numero, nfseXml]] of rows.entries()) {
      const row = after.rows[i]!;
      expect(row).toMatchObject({
        id,
        status,
        transmission,
        declaration_id: dpsId,
        declaration_xml: dpsXml,
        access_key: ch,
        numero_nfse: numero,
        nfse_xml: nfseXml,
        protocol: null,
        verification_code: null,
      });
      expect(row.declaration_number === null ? null : Number(row.declaration_number)).toBe(n);
    }
    // the fiscal number stays unique per project and series under its new name
    await expect(
      client.query(
        `insert into invoices (project_id, org_id, status, engine, request, ambiente, serie, declaration_number)
         values ($1, $2, 'processing', 'national', '{}', 2, '1', 1)`,
        [project, org],
      ),
    ).rejects.toThrow(/invoices_fiscal_number_uq/);
    await client.close();
  });
});
