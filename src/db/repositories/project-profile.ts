import { and, eq, sql } from 'drizzle-orm';
import type { ProjectFiscalProfile, RegimeTributario } from '../../domain/project-profile.ts';
import type { Db, DbOrTx } from '../client.ts';
import { prepared } from '../prepared.ts';
import { projects } from '../schema.ts';
import { sharedReads, type TableChanges } from '../table-changes.ts';

type ProjectRow = typeof projects.$inferSelect;

export function toFiscalProfile(row: ProjectRow): ProjectFiscalProfile {
  const e = row.endereco;
  return {
    id: row.id,
    cnpj: row.cnpj,
    razaoSocial: row.razaoSocial,
    inscricaoMunicipal: row.inscricaoMunicipal,
    codigoMunicipio: row.codigoMunicipio,
    regimeTributario: (row.regimeTributario as RegimeTributario | null) ?? null,
    regimeIss: (row.regimeIss as 1 | 2 | 3 | null) ?? null,
    email: row.email,
    telefone: row.telefone,
    endereco: e
      ? {
          logradouro: e.logradouro ?? null,
          numero: e.numero ?? null,
          complemento: e.complemento ?? null,
          bairro: e.bairro ?? null,
          cidade: e.cidade ?? null,
          uf: e.uf ?? null,
          cep: e.cep ?? null,
        }
      : null,
    codigoTributacao: row.codigoTributacao,
    tributacaoIss: (row.tributacaoIss as 1 | 2 | 3 | 4 | null) ?? null,
    serieNfse: row.serieNfse,
    aliquotaSimples: row.aliquotaSimples,
    cnae: row.cnae,
    ambiente: row.ambiente === 1 ? 1 : 2,
    cstPisCofins: row.cstPisCofins,
    aliquotaPis: row.aliquotaPis,
    aliquotaCofins: row.aliquotaCofins,
    tipoRetencaoPisCofins: row.tipoRetencaoPisCofins,
    defaultCstIbscbs: row.defaultCstIbscbs,
    defaultClassificacaoTributaria: row.defaultClassificacaoTributaria,
    defaultIndicadorOperacao: row.defaultIndicadorOperacao,
    defaultNbs: row.defaultNbs,
    codigoServicoSp: row.codigoServicoSp,
  };
}

/**
 * The project's row as the jobs read it for every note: `loadProjectRow`, kept in memory on the embedded database
 * until the projects table changes (`changes`, see db/table-changes.ts); shared only while in flight elsewhere.
 * The row is frozen: callers share it.
 */
export function loadProjectRowShared(db: Db, changes: TableChanges | null, projectId: string) {
  return sharedReads<ProjectRow | null>(db, 'project_row', changes, ['projects']).get(projectId, () =>
    loadProjectRow(db, projectId),
  );
}

export async function loadProjectRow(db: DbOrTx, projectId: string, options: { activeOnly?: boolean } = {}) {
  if (!options.activeOnly) {
    const [row] = await prepared(db, 'project_by_id', (d) =>
      d
        .select()
        .from(projects)
        .where(eq(projects.id, sql.placeholder('projectId')))
        .limit(1)
        .prepare('project_by_id'),
    ).execute({ projectId });
    return row ?? null;
  }
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.id, projectId), eq(projects.active, true)))
    .limit(1);
  return row ?? null;
}
