import { type Static, type TSchema, Type } from 'typebox';
import type { LastNumbers } from '../../../db/repositories/numbering.ts';
import type { ProjectRow } from '../../../db/repositories/projects.ts';

/** Spec 2.2: per document kind, the last used number, the next one (always last + 1) and the series. */
const counter = <S extends TSchema>(serie: S, kind: string) =>
  Type.Object(
    {
      ultimoNumero: Type.Integer({ description: `Last ${kind} number used` }),
      proximoNumero: Type.Integer({ description: 'Always ultimoNumero + 1' }),
      serie,
    },
    { description: `${kind} numbering` },
  );

export const NumberingView = Type.Object(
  {
    nfse: counter(Type.String({ description: 'The project serieNfse' }), 'NFS-e'),
    nfe: counter(
      Type.Union([Type.Integer(), Type.Null()], { description: 'The project serieNfe (null when unset)' }),
      'NF-e',
    ),
    nfce: counter(
      Type.Union([Type.Integer(), Type.Null()], { description: 'The project serieNfce (null when unset)' }),
      'NFC-e',
    ),
  },
  { description: 'Numbering per document kind (spec 2.2)' },
);

/** The numbering the OpenAPI examples show: 1,342 NFS-e numbers used (GET and PUT .../numeracao). */
export const NUMBERING_EXAMPLE: Static<typeof NumberingView> = {
  nfse: { ultimoNumero: 1342, proximoNumero: 1343, serie: '1608' },
  nfe: { ultimoNumero: 0, proximoNumero: 1, serie: null },
  nfce: { ultimoNumero: 0, proximoNumero: 1, serie: null },
};

export function numberingView(project: ProjectRow, last: LastNumbers) {
  return {
    nfse: { ultimoNumero: last.nfse, proximoNumero: last.nfse + 1, serie: project.serieNfse },
    nfe: { ultimoNumero: last.nfe, proximoNumero: last.nfe + 1, serie: project.serieNfe },
    nfce: { ultimoNumero: last.nfce, proximoNumero: last.nfce + 1, serie: project.serieNfce },
  };
}
