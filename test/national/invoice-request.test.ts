import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import {
  checkInvoiceRequest,
  type InvoiceCheckResult,
  type InvoiceRequest,
  InvoiceRequestSchema,
  type NormalizedInvoice,
} from '../../src/domain/invoice-request.ts';
import { fiscalProfile } from '../support/fiscal-profile.ts';
import type { ProjectFiscalProfile } from '../../src/domain/project-profile.ts';

/** Provider in São Paulo (an adherent of the national emitter), regime 1, code 17.08 (single Anexo VIII framing). */
function projectWith(overrides: Partial<ProjectFiscalProfile> = {}): ProjectFiscalProfile {
  return fiscalProfile({
    id: 'prj_1',
    razaoSocial: 'ACME SERVICOS LTDA',
    inscricaoMunicipal: '12345678',
    codigoMunicipio: '3550308',
    email: 'fiscal@acme.com.br',
    telefone: '1133334444',
    codigoTributacao: '170801',
    ...overrides,
  });
}

function baseBody(): InvoiceRequest {
  return {
    tomador: {
      cnpj: '11444777000161',
      nome: 'Cliente Exemplo SA',
      email: 'contas@cliente.com.br',
      endereco: {
        logradouro: 'Avenida Paulista',
        numero: '1000',
        bairro: 'Bela Vista',
        cidade: 'Sao Paulo',
        uf: 'SP',
        cep: '01310100',
      },
    },
    servico: { descricao: 'Franquia de marca' },
    valores: { total: 1500, aliquotaIss: 2 },
  };
}

/** A deep copy of the base body with a change applied. */
function bodyWith(change: (body: InvoiceRequest & Record<string, unknown>) => void): InvoiceRequest {
  const body = structuredClone(baseBody()) as InvoiceRequest & Record<string, unknown>;
  change(body);
  return body;
}

const NOW = new Date('2026-08-20T15:00:00Z');

function check(body: InvoiceRequest, project = projectWith()): InvoiceCheckResult {
  return checkInvoiceRequest(body, project, { now: NOW });
}

/** The normalised invoice, with the warnings of the check as text (`CODE message`) in `notes`. */
function ok(body: InvoiceRequest, project = projectWith()): NormalizedInvoice & { notes: string[] } {
  const result = check(body, project);
  if (!result.ok) throw new Error(`expected ok, got ${result.code}: ${JSON.stringify(result.errors)}`);
  return { ...result.value, notes: result.warnings.map((w) => `${w.code} ${w.field}: ${w.message}`) };
}

function fields(result: InvoiceCheckResult): string[] {
  return result.ok ? [] : result.errors.map((e) => e.field);
}

describe('InvoiceRequestSchema', () => {
  it('accepts the base body and documents every property', () => {
    expect(Value.Check(InvoiceRequestSchema, baseBody())).toBe(true);
    const undocumented: string[] = [];
    const walk = (schema: Record<string, unknown>, path: string) => {
      const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
      if (props) {
        for (const [name, child] of Object.entries(props)) {
          if (typeof child.description !== 'string' || child.description.length < 5)
            undocumented.push(`${path}${name}`);
          walk(child, `${path}${name}.`);
        }
      }
      for (const variant of (schema.anyOf as Record<string, unknown>[] | undefined) ?? []) walk(variant, path);
    };
    walk(InvoiceRequestSchema as unknown as Record<string, unknown>, '');
    expect(undocumented).toEqual([]);
  });

  it('refuses what the schema can say: missing required fields, patterns, limits', () => {
    expect(
      Value.Check(
        InvoiceRequestSchema,
        bodyWith((b) => delete (b.tomador as { nome?: string }).nome),
      ),
    ).toBe(false);
    expect(
      Value.Check(
        InvoiceRequestSchema,
        bodyWith((b) => (b.valores.total = 0)),
      ),
    ).toBe(false);
    expect(
      Value.Check(
        InvoiceRequestSchema,
        bodyWith((b) => (b.competencia = '2026-13')),
      ),
    ).toBe(false);
    expect(
      Value.Check(
        InvoiceRequestSchema,
        bodyWith((b) => (b.tomador.cnpj = '11.444.777/0001-61')),
      ),
    ).toBe(false);
    expect(
      Value.Check(
        InvoiceRequestSchema,
        bodyWith((b) => (b.servico.informacoesComplementares = 'x'.repeat(2001))),
      ),
    ).toBe(false);
    expect(
      Value.Check(
        InvoiceRequestSchema,
        bodyWith((b) => (b.valores.aliquotaIss = -1)),
      ),
    ).toBe(false);
    // above 5 %: refused by the rules with the government's code (E0595), not by the schema
    expect(fields(check(bodyWith((b) => (b.valores.aliquotaIss = 5.5))))).toEqual(['valores.aliquotaIss']);
    // aliases and unknown properties are allowed
    expect(
      Value.Check(
        InvoiceRequestSchema,
        bodyWith((b) => {
          b.valores.ibscbs = { cClassTrib: '000001', indOp: '100301', codigoNbs: '111100000', tpOper: 1 };
          b.extra = true;
        }),
      ),
    ).toBe(true);
  });
});

describe('checkInvoiceRequest: field errors carry the dotted body path', () => {
  const cases: [string, (b: InvoiceRequest & Record<string, unknown>) => void, string, ProjectFiscalProfile?][] = [
    ['CNPJ with wrong check digits', (b) => (b.tomador.cnpj = '11444777000162'), 'tomador.cnpj'],
    [
      'CPF with wrong check digits',
      (b) => {
        delete b.tomador.cnpj;
        b.tomador.cpf = '52998224726';
      },
      'tomador.cpf',
    ],
    ['two identifications', (b) => (b.tomador.cpf = '52998224725'), 'tomador.cpf'],
    ['no identification', (b) => delete b.tomador.cnpj, 'tomador'],
    ['the provider as taker (same CNPJ root)', (b) => (b.tomador.cnpj = '11222333000262'), 'tomador.cnpj'],
    ['unknown country', (b) => (b.tomador.endereco!.pais = 'XX'), 'tomador.endereco.pais'],
    ['unknown state', (b) => (b.tomador.endereco!.uf = 'ZZ'), 'tomador.endereco.uf'],
    ['CEP with a mask', (b) => (b.tomador.endereco!.cep = '01310-100'), 'tomador.endereco.cep'],
    ['unknown city', (b) => (b.tomador.endereco!.cidade = 'Cidade Inexistente'), 'tomador.endereco.cidade'],
    [
      'a city name in several states without uf',
      (b) => {
        b.tomador.endereco!.cidade = 'Bom Jesus';
        delete b.tomador.endereco!.uf;
      },
      'tomador.endereco.uf',
    ],
    ['invalid e-mail', (b) => (b.tomador.email = 'not-an-email'), 'tomador.email'],
    [
      'a NIF for an address in Brazil',
      (b) => {
        delete b.tomador.cnpj;
        b.tomador.nif = 'X123';
      },
      'tomador.endereco.pais',
    ],
    ['a 5-digit service code', (b) => (b.servico.codigo = '17081'), 'servico.codigo'],
    ['a code outside the national list', (b) => (b.servico.codigo = '999999'), 'servico.codigo'],
    ['no code at all', () => {}, 'servico.codigo', projectWith({ codigoTributacao: null })],
    ['a bad project default code', () => {}, 'project.codigoTributacao', projectWith({ codigoTributacao: '12' })],
    ['unknown place of service', (b) => (b.servico.localPrestacao = '1234567'), 'servico.localPrestacao'],
    ['Brazil as a country of service', (b) => (b.servico.localPrestacao = 'BR'), 'servico.localPrestacao'],
    ['service abroad without export group', (b) => (b.servico.localPrestacao = 'US'), 'valores.exportacao'],
    [
      'export without mode',
      (b) => {
        b.valores.aliquotaIss = 0;
        b.valores.exportacao = { codigoMoeda: '220', valorServicoMoeda: 300, paisResultado: 'US' };
      },
      'valores.exportacao.modoPrestacao',
    ],
    [
      'export without the country of result',
      (b) => {
        b.valores.aliquotaIss = 0;
        b.valores.exportacao = { modoPrestacao: 1, codigoMoeda: '220', valorServicoMoeda: 300 };
      },
      'valores.exportacao.paisResultado',
    ],
    [
      'movimentacaoTemporariaBens 2 without the import declaration',
      (b) => {
        b.valores.aliquotaIss = 0;
        b.valores.exportacao = {
          modoPrestacao: 4,
          codigoMoeda: '220',
          valorServicoMoeda: 300,
          paisResultado: 'US',
          movimentacaoTemporariaBens: 2,
        };
      },
      'valores.exportacao.declaracaoImportacao',
    ],
    ['a rate above 5%', (b) => (b.valores.aliquotaIss = 6), 'valores.aliquotaIss'],
    [
      'a rate with immunity',
      (b) => {
        b.valores.tribISSQN = 2;
        b.valores.tipoImunidade = 3;
      },
      'valores.aliquotaIss',
    ],
    [
      'withholding on an export',
      (b) => {
        b.valores.aliquotaIss = 0;
        b.valores.issRetido = true;
        b.valores.exportacao = { modoPrestacao: 1, codigoMoeda: '220', valorServicoMoeda: 300, paisResultado: 'US' };
      },
      'valores.issRetido',
    ],
    [
      'withholding by a MEI',
      (b) => (b.valores.issRetido = true),
      'valores.issRetido',
      projectWith({ regimeTributario: '2' }),
    ],
    [
      'a rate of zero where the DPS must declare it (regime 1, municipality outside the national emitter)',
      (b) => (b.valores.aliquotaIss = 0),
      'valores.aliquotaIss',
      projectWith({ codigoMunicipio: '3509502' }),
    ],
    [
      'Simples with withholding below 1.8%',
      (b) => {
        b.valores.issRetido = true;
        b.valores.aliquotaIss = 1.5;
      },
      'valores.aliquotaIss',
      projectWith({ regimeTributario: '3', regimeIss: 1, aliquotaSimples: 6 }),
    ],
    [
      'approximate taxes in % and BRL at once',
      (b) => (b.valores.totaisTributosAproximados = { percentualTributacaoFederal: 10, valorTributacaoMunicipal: 30 }),
      'valores.totaisTributosAproximados',
    ],
    [
      'approximate taxes above the total',
      (b) => (b.valores.totaisTributosAproximados = { valorTributacaoFederal: 2000 }),
      'valores.totaisTributosAproximados.valorTributacaoFederal',
    ],
    ['a PIS/COFINS CST of one digit', (b) => (b.valores.pisCofins = { cst: '1' }), 'valores.pisCofins.cst'],
    [
      'a taxed PIS/COFINS CST without rates',
      (b) => (b.valores.pisCofins = { cst: '01' }),
      'valores.pisCofins.aliquotaPis',
    ],
    ['an IRRF retention above the total', (b) => (b.valores.retencaoIrrf = 1500), 'valores.retencaoIrrf'],
    [
      'an event ending before it starts',
      (b) => {
        b.servico.codigo = '120101';
        b.servico.evento = { nome: 'Show', dataInicio: '2026-08-10', dataFim: '2026-08-09', id: 'EVT1' };
      },
      'servico.evento.dataFim',
    ],
    ['a future competencia', (b) => (b.competencia = '2026-09'), 'competencia'],
    ['an IBS/CBS CST of another classification', (b) => (b.valores.ibscbs = { cst: '200' }), 'valores.ibscbs.cst'],
    [
      'conflicting IBS/CBS aliases',
      (b) => (b.valores.ibscbs = { classificacaoTributaria: '000001', cClassTrib: '200052' }),
      'valores.ibscbs.cClassTrib',
    ],
    [
      'a cClassTrib not valid for NFS-e',
      (b) => (b.valores.ibscbs = { classificacaoTributaria: '000002' }),
      'valores.ibscbs.classificacaoTributaria',
    ],
    [
      'a cIndOp outside Anexo C',
      (b) => (b.servico.ibscbs = { indicadorOperacao: '070100' }),
      'servico.ibscbs.indicadorOperacao',
    ],
    ['an NBS outside NBS 2.0', (b) => (b.servico.nbs = '999999999'), 'servico.nbs'],
    ['an invalid tpOper', (b) => (b.valores.ibscbs = { tipoOperacao: 7 }), 'valores.ibscbs.tipoOperacao'],
    [
      'a recipient flag without recipient',
      (b) => (b.valores.ibscbs = { destinatarioPrincipal: '1' }),
      'valores.ibscbs.destinatario',
    ],
  ];

  for (const [name, change, field, project] of cases) {
    it(`${name} → ${field}`, () => {
      const result = check(bodyWith(change), project ?? projectWith());
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.code).toBe('VALIDATION_FAILED');
      expect(fields(result)).toContain(field);
    });
  }

  it('reports every bad field at once', () => {
    const result = check(
      bodyWith((b) => {
        b.tomador.cnpj = '00000000000000';
        b.tomador.endereco!.cep = '123';
        b.valores.aliquotaIss = 9;
      }),
    );
    expect(fields(result)).toEqual(
      expect.arrayContaining(['tomador.cnpj', 'tomador.endereco.cep', 'valores.aliquotaIss']),
    );
  });

  it('refuses a project without municipality or regime with PROJECT_INCOMPLETE', () => {
    const result = check(baseBody(), projectWith({ regimeTributario: null, codigoMunicipio: null }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('PROJECT_INCOMPLETE');
    expect(fields(result)).toEqual(['project.codigoMunicipio', 'project.regimeTributario']);
  });
});

describe('checkInvoiceRequest: normalization', () => {
  it('resolves the taker city to its IBGE code and fills defaults', () => {
    const invoice = ok(baseBody());
    expect(invoice.tomador.id).toEqual({ kind: 'cnpj', cnpj: '11444777000161' });
    expect(invoice.tomador.endereco).toMatchObject({ codigoMunicipio: '3550308', cidade: 'São Paulo', nacional: true });
    expect(invoice.servico.cTribNac).toBe('170801');
    expect(invoice.servico.localPrestacao).toEqual({ kind: 'municipio', codigoMunicipio: '3550308' });
    expect(invoice.competencia).toBe('2026-08');
    expect(invoice.iss).toMatchObject({ tribISSQN: 1, tpRetISSQN: 1, aliquota: 2, pAliq: null, pAliqRule: 'E0617' });
  });

  it('takes the default competencia in Brasília time', () => {
    // 02:00 UTC on the 1st of September is still August in Brasília
    const result = checkInvoiceRequest(baseBody(), projectWith(), { now: new Date('2026-09-01T02:00:00Z') });
    expect(result.ok && result.value.competencia).toBe('2026-08');
  });

  it('normalizes 4 or 5 zeros to 000000 (rule 4.7.2), with no ISS incidence', () => {
    for (const code of ['0000', '00000']) {
      const invoice = ok(
        bodyWith((b) => {
          b.servico.codigo = code;
          b.valores.aliquotaIss = 0;
        }),
      );
      expect(invoice.servico.cTribNac).toBe('000000');
      expect(invoice.iss.tribISSQN).toBe(4);
    }
  });

  it('accepts a foreign taker by NIF or without NIF, with its address abroad', () => {
    const withNif = ok(
      bodyWith((b) => {
        b.tomador = {
          nif: 'DE123456789',
          nome: 'Kunde GmbH',
          endereco: {
            pais: 'de',
            uf: 'EX',
            cidade: 'Berlin',
            estadoProvincia: 'Berlin',
            cep: '10115',
            logradouro: 'Unter den Linden',
            numero: '5',
            bairro: 'Mitte',
          },
        };
        b.valores.aliquotaIss = 0;
        b.valores.exportacao = { modoPrestacao: 1, codigoMoeda: '978', valorServicoMoeda: 250, paisResultado: 'DE' };
      }),
    );
    expect(withNif.tomador).toMatchObject({ id: { kind: 'nif', nif: 'DE123456789' }, estrangeiro: true });
    expect(withNif.tomador.endereco).toMatchObject({ pais: 'DE', nacional: false, codigoMunicipio: null });
    expect(withNif.iss.tribISSQN).toBe(3);
    const withoutNif = ok(
      bodyWith((b) => {
        b.tomador = { motivoNaoNif: 2, nome: 'Cliente', endereco: { pais: 'US', cidade: 'Austin', uf: 'TX' } };
        b.valores.aliquotaIss = 0;
        b.valores.exportacao = { modoPrestacao: 1, codigoMoeda: '220', valorServicoMoeda: 250, paisResultado: 'US' };
      }),
    );
    expect(withoutNif.tomador.id).toEqual({ kind: 'semNif', motivo: 2 });
    expect(withoutNif.tomador.endereco?.estadoProvincia).toBe('TX');
  });

  it('derives tribISSQN 3 from the export group and the municipality of incidence from the code', () => {
    const exported = ok(
      bodyWith((b) => {
        b.valores.aliquotaIss = 0;
        b.valores.exportacao = { modoPrestacao: 1, codigoMoeda: '220', valorServicoMoeda: 300, paisResultado: 'US' };
      }),
    );
    expect(exported.iss).toMatchObject({ tribISSQN: 3, pAliq: null, pAliqRule: 'E0602' });
    expect(exported.servico.municipioIncidencia).toBeNull();
    expect(exported.ibscbs).toBeNull();
    expect(exported.notes.join(' ')).toContain('export');
    // 07.02 is due where the work is (LP)
    const work = ok(
      bodyWith((b) => {
        b.servico.codigo = '070201';
        b.servico.localPrestacao = '3509502';
        b.servico.obra = { codigoObra: '900012345678' };
        b.valores.ibscbs = { nbs: '101011100', classificacaoTributaria: '200046' };
      }),
    );
    expect(work.servico).toMatchObject({ incidencia: 'LP', municipioIncidencia: '3509502' });
    // Campinas does not use the national emitter: regime 1 must declare the rate there (E0619)
    expect(work.iss).toMatchObject({ pAliq: 2, pAliqRule: 'E0619', municipioIncidenciaNoEmissorNacional: false });
  });

  it('decides pAliq by regime, withholding and municipality (E0600-E0640)', () => {
    const sp = '3550308';
    const campinas = '3509502';
    const decide = (project: ProjectFiscalProfile, retido = false) =>
      ok(
        bodyWith((b) => (b.valores.issRetido = retido)),
        project,
      ).iss;
    expect(decide(projectWith({ regimeTributario: '2' }))).toMatchObject({ pAliq: null, pAliqRule: 'E0600' });
    expect(decide(projectWith({ codigoMunicipio: sp }))).toMatchObject({ pAliq: null, pAliqRule: 'E0617' });
    expect(decide(projectWith({ codigoMunicipio: campinas }))).toMatchObject({ pAliq: 2, pAliqRule: 'E0619' });
    const simples = { regimeTributario: '3' as const, regimeIss: 1 as const, aliquotaSimples: 6 };
    expect(decide(projectWith({ ...simples }), true)).toMatchObject({ pAliq: 2, pAliqRule: 'E0621', tpRetISSQN: 2 });
    expect(decide(projectWith({ ...simples }))).toMatchObject({ pAliq: null, pAliqRule: 'E0625' });
    expect(decide(projectWith({ ...simples, codigoMunicipio: campinas }))).toMatchObject({ pAliqRule: 'E0631' });
    const outside = { regimeTributario: '3e' as const, regimeIss: 3 as const, aliquotaSimples: 10 };
    expect(decide(projectWith({ ...outside }))).toMatchObject({ pAliq: null, pAliqRule: 'E0635' });
    expect(decide(projectWith({ ...outside, codigoMunicipio: campinas }))).toMatchObject({
      pAliq: 2,
      pAliqRule: 'E0640',
    });
  });

  it('maps the regime to opSimpNac / regApTribSN', () => {
    expect(ok(baseBody(), projectWith({ regimeTributario: '2' })).regime).toMatchObject({ opSimpNac: 2, mei: true });
    expect(ok(baseBody(), projectWith({ regimeTributario: '3', regimeIss: null })).regime).toMatchObject({
      opSimpNac: 3,
      regApTribSN: 1,
    });
    const excess = ok(baseBody(), projectWith({ regimeTributario: '3e', regimeIss: null }));
    expect(excess.regime).toMatchObject({ opSimpNac: 3, regApTribSN: 2 });
    expect(excess.notes.join(' ')).toContain('3e');
    expect(ok(baseBody(), projectWith({ regimeTributario: '3e', regimeIss: 3 })).regime.regApTribSN).toBe(3);
  });

  it('resolves the federal groups request → project, and ignores them for MEI and Simples', () => {
    const project = projectWith({ cstPisCofins: '01', aliquotaPis: 0.65, aliquotaCofins: 3, tipoRetencaoPisCofins: 1 });
    const fromProject = ok(baseBody(), project).federal;
    expect(fromProject?.pisCofins).toEqual({
      cst: '01',
      baseCalculo: 1500,
      aliquotaPis: 0.65,
      aliquotaCofins: 3,
      valorPis: 9.75,
      valorCofins: 45,
      tipoRetencao: 1,
      source: 'project',
    });
    const overridden = ok(
      bodyWith((b) => {
        b.valores.pisCofins = { aliquotaCofins: 7.6, baseCalculo: 1000, tipoRetencao: 0 };
        b.valores.retencaoIrrf = 22.5;
      }),
      project,
    ).federal;
    expect(overridden?.pisCofins).toMatchObject({ cst: '01', baseCalculo: 1000, aliquotaPis: 0.65, valorCofins: 76 });
    expect(overridden?.pisCofins?.tipoRetencao).toBe(0);
    expect(overridden?.retencaoIrrf).toBe(22.5);
    const notTaxed = ok(bodyWith((b) => (b.valores.pisCofins = { cst: '08' }))).federal?.pisCofins;
    expect(notTaxed).toMatchObject({ cst: '08', baseCalculo: null, aliquotaPis: null, source: 'request' });

    for (const regimeTributario of ['2', '3'] as const) {
      const invoice = ok(
        bodyWith((b) => {
          b.valores.pisCofins = { cst: '01', aliquotaPis: 0.65, aliquotaCofins: 3 };
          b.valores.retencaoCsll = 10;
        }),
        { ...project, regimeTributario, aliquotaSimples: 6 },
      );
      expect(invoice.federal).toBeNull();
      expect(invoice.notes.join(' ')).toContain('valores.pisCofins');
    }
  });

  it('takes approximate taxes in % or BRL, the Simples rate, or none', () => {
    expect(
      ok(bodyWith((b) => (b.valores.totaisTributosAproximados = { percentualTributacaoFederal: 13.45 })))
        .totaisTributos,
    ).toEqual({ kind: 'percentuais', federal: 13.45, estadual: 0, municipal: 0 });
    expect(
      ok(
        bodyWith(
          (b) => (b.valores.totaisTributosAproximados = { valorTributacaoFederal: 100, valorTributacaoMunicipal: 30 }),
        ),
      ).totaisTributos,
    ).toEqual({ kind: 'valores', federal: 100, estadual: 0, municipal: 30 });
    expect(ok(baseBody(), projectWith({ regimeTributario: '3', aliquotaSimples: 6.54 })).totaisTributos).toEqual({
      kind: 'simples',
      percentual: 6.54,
    });
    expect(ok(baseBody()).totaisTributos).toEqual({ kind: 'naoInformado' });
  });
});

describe('checkInvoiceRequest: IBS/CBS framing', () => {
  const softwareProject = projectWith({ codigoTributacao: '010101' });

  it('returns IBSCBS_FRAMING_AMBIGUOUS with every combination when nothing fixes the framing', () => {
    const result = check(baseBody(), softwareProject);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('IBSCBS_FRAMING_AMBIGUOUS');
    const { combinations } = result.details as { combinations: Record<string, string>[] };
    expect(combinations).toHaveLength(13);
    expect(combinations).toContainEqual({
      nbs: '115021000',
      indicadorOperacao: '100301',
      classificacaoTributaria: '000001',
      cst: '000',
    });
    for (const c of combinations)
      expect(Object.keys(c).sort()).toEqual(['classificacaoTributaria', 'cst', 'indicadorOperacao', 'nbs']);
  });

  it('narrows the ambiguity with what is fixed, and never picks by itself', () => {
    const result = check(
      bodyWith((b) => (b.servico.nbs = '115029000')),
      softwareProject,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('IBSCBS_FRAMING_AMBIGUOUS');
    const { combinations } = result.details as { combinations: { classificacaoTributaria: string }[] };
    expect(combinations.map((c) => c.classificacaoTributaria)).toEqual(['000001', '200043', '200044']);
  });

  it('fills a single framing from the table', () => {
    const invoice = ok(baseBody());
    expect(invoice.ibscbs).toMatchObject({
      nbs: '111100000',
      indicadorOperacao: '100301',
      classificacaoTributaria: '000001',
      cst: '000',
      consumidorFinal: false,
      indDest: 0,
      sources: { nbs: 'table', indicadorOperacao: 'table', classificacaoTributaria: 'table' },
    });
    expect(invoice.servico.nbs).toBe('111100000');
  });

  it('applies the precedence valores.ibscbs → servico.ibscbs → project defaults → table, per field', () => {
    const project = projectWith({
      codigoTributacao: '010101',
      defaultNbs: '115021000',
      defaultIndicadorOperacao: '100301',
      defaultClassificacaoTributaria: '000001',
      defaultCstIbscbs: '000',
    });
    const fromProject = ok(baseBody(), project).ibscbs!;
    expect(fromProject.sources).toEqual({
      nbs: 'project.defaultNbs',
      indicadorOperacao: 'project.defaultIndicadorOperacao',
      classificacaoTributaria: 'project.defaultClassificacaoTributaria',
      cst: 'project.defaultCstIbscbs',
    });
    const servicoOverProject = ok(
      bodyWith((b) => (b.servico.ibscbs = { codigoNbs: '115029000', cClassTrib: '200044' })),
      project,
    ).ibscbs!;
    expect(servicoOverProject).toMatchObject({ nbs: '115029000', classificacaoTributaria: '200044', cst: '200' });
    expect(servicoOverProject.sources).toMatchObject({
      nbs: 'servico.ibscbs.codigoNbs',
      indicadorOperacao: 'project.defaultIndicadorOperacao',
      classificacaoTributaria: 'servico.ibscbs.cClassTrib',
    });
    // the project CST contradicts the classification the request chose: ignored, with a note
    const withNotes = ok(
      bodyWith((b) => (b.servico.ibscbs = { codigoNbs: '115029000', cClassTrib: '200044' })),
      project,
    );
    expect(withNotes.notes.join(' ')).toContain('defaultCstIbscbs');
    const valoresOverServico = ok(
      bodyWith((b) => {
        b.servico.ibscbs = { nbs: '115029000', classificacaoTributaria: '200044' };
        b.valores.ibscbs = { classificacaoTributaria: '200043', cstIbscbs: '200' };
      }),
      project,
    ).ibscbs!;
    expect(valoresOverServico).toMatchObject({ nbs: '115029000', classificacaoTributaria: '200043', cst: '200' });
    expect(valoresOverServico.sources.cst).toBe('valores.ibscbs.cstIbscbs');
    // servico.nbs sits between the ibscbs groups and the project default
    expect(
      ok(
        bodyWith((b) => (b.servico.nbs = '115025000')),
        project,
      ).ibscbs?.nbs,
    ).toBe('115025000');
  });

  it('names the lowest-precedence field of an invalid tuple and lists the valid combinations', () => {
    const project = projectWith({ codigoTributacao: '010101', defaultNbs: '115021000' });
    const result = check(
      bodyWith((b) => (b.valores.ibscbs = { classificacaoTributaria: '200043' })),
      project,
    );
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('VALIDATION_FAILED');
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0].field).toBe('project.defaultNbs');
    expect(result.errors[0].message).toContain('valores.ibscbs.classificacaoTributaria 200043');
    expect((result.details as { combinations: unknown[] }).combinations).toEqual([
      { nbs: '115029000', indicadorOperacao: '100301', classificacaoTributaria: '200043', cst: '200' },
    ]);
    const wrongOp = check(
      bodyWith((b) => (b.valores.ibscbs = { nbs: '115021000', indicadorOperacao: '030101' })),
      projectWith({ codigoTributacao: '010101' }),
    );
    expect(fields(wrongOp)).toEqual(['valores.ibscbs.indicadorOperacao']);
  });

  it('reads the aliases and the other IBS/CBS fields; tpEnteGov 9 is omitted with a warning', () => {
    const invoice = ok(
      bodyWith(
        (b) =>
          (b.valores.ibscbs = {
            indFinal: '1',
            tpOper: '3',
            tpEnteGov: 9,
            indDest: 0,
          }),
      ),
    );
    expect(invoice.ibscbs).toMatchObject({
      consumidorFinal: true,
      tipoOperacao: 3,
      tipoEnteGovernamental: null,
      tipoEnteGovernamentalOutro: true,
      indDest: 0,
    });
    expect(invoice.notes.join(' ')).toContain('TIPO_ENTE_GOVERNAMENTAL_NOT_EXPRESSIBLE');
    const gov = ok(bodyWith((b) => (b.valores.ibscbs = { enteGovernamental: '4', consumidorFinal: false })));
    expect(gov.ibscbs).toMatchObject({ tipoEnteGovernamental: 4, consumidorFinal: false });
  });

  it('accepts a recipient other than the taker', () => {
    const invoice = ok(
      bodyWith(
        (b) =>
          (b.valores.ibscbs = {
            destinatarioPrincipal: '1',
            destinatario: { cpf: '52998224725', nome: 'Maria da Silva' },
          }),
      ),
    );
    expect(invoice.ibscbs).toMatchObject({ indDest: 1, destinatario: { id: { kind: 'cpf', cpf: '52998224725' } } });
  });

  it('does not frame an export from the project defaults, but from the request', () => {
    const project = projectWith({
      codigoTributacao: '010101',
      defaultNbs: '115021000',
      defaultIndicadorOperacao: '100301',
      defaultClassificacaoTributaria: '000001',
    });
    const exportBody = (ibscbs?: Record<string, string>) =>
      bodyWith((b) => {
        b.valores.aliquotaIss = 0;
        b.valores.exportacao = { modoPrestacao: 1, codigoMoeda: '220', valorServicoMoeda: 300, paisResultado: 'US' };
        if (ibscbs) b.valores.ibscbs = ibscbs;
      });
    const omitted = ok(exportBody(), project);
    expect(omitted.ibscbs).toBeNull();
    expect(omitted.servico.nbs).toBe('115021000');
    const explicit = ok(exportBody({ indicadorOperacao: '100301', classificacaoTributaria: '410027' }), project);
    expect(explicit.ibscbs).toMatchObject({ nbs: '115021000', classificacaoTributaria: '410027', cst: '410' });
  });
});
