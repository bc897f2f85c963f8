import { h } from '../dom.ts';
import { t } from '../i18n.ts';

/** The project fields the dashboard edits, named as the API names them (errors land under their input). */
type Field = {
  name: string;
  kind?: 'number' | 'select';
  options?: [string, string][];
  /** how a select's value is sent (default: the text) */
  valueType?: 'number' | 'boolean';
  required?: boolean;
  hint?: string;
};

const FIELDS: Field[] = [
  { name: 'name', required: true },
  { name: 'cnpj', required: true, hint: '00000000000000' },
  { name: 'razaoSocial', required: true },
  { name: 'inscricaoMunicipal' },
  {
    name: 'regimeTributario',
    kind: 'select',
    options: [
      ['1', 'regime.1'],
      ['2', 'regime.2'],
      ['3', 'regime.3'],
      ['3e', 'regime.3e'],
    ],
  },
  { name: 'codigoMunicipio', hint: 'IBGE' },
  {
    // only where the municipality adheres to the national emitter (the API answers 400 naming the field otherwise)
    name: 'emissorNacional',
    kind: 'select',
    valueType: 'boolean',
    options: [
      ['false', 'boolean.false'],
      ['true', 'boolean.true'],
    ],
  },
  { name: 'email' },
  { name: 'telefone' },
  { name: 'endereco.logradouro' },
  { name: 'endereco.numero' },
  { name: 'endereco.bairro' },
  { name: 'endereco.cidade' },
  { name: 'endereco.uf' },
  { name: 'endereco.cep' },
  { name: 'codigoTributacao' },
  { name: 'tributacaoIss', kind: 'number' },
  { name: 'serieNfse' },
  {
    name: 'ambiente',
    kind: 'select',
    valueType: 'number',
    options: [
      ['2', 'ambiente.2'],
      ['1', 'ambiente.1'],
    ],
  },
  { name: 'defaultNbs' },
  { name: 'defaultIndicadorOperacao' },
  { name: 'defaultClassificacaoTributaria' },
  { name: 'defaultCstIbscbs' },
];

function valueAt(values: Record<string, unknown>, path: string): string {
  let node: unknown = values;
  for (const part of path.split('.'))
    node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
  return node === null || node === undefined ? '' : String(node);
}

/** The fields of a project form; `values` pre-fills them (edit), `lockCnpj` for an existing project. */
export function projectFields(values: Record<string, unknown> = {}, lockCnpj = false): HTMLElement {
  return h(
    'div',
    { class: 'grid' },
    FIELDS.map((f) => {
      const value = valueAt(values, f.name);
      const label = t(`field.${f.name}`);
      const input =
        f.kind === 'select'
          ? h(
              'select',
              { name: f.name, 'data-type': f.valueType ?? null },
              h('option', { value: '' }, '—'),
              f.options!.map(([v, k]) => h('option', { value: v, selected: value === v }, t(k))),
            )
          : h('input', {
              name: f.name,
              value,
              placeholder: f.hint ?? null,
              'data-type': f.kind === 'number' ? 'number' : null,
              disabled: lockCnpj && f.name === 'cnpj',
            });
      return h('label', {}, label, input);
    }),
  );
}
