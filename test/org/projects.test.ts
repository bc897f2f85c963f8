import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSecret } from '../../src/certificates/vault.ts';
import { numbering, projects } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { expectProblem, nextCnpj, projectBody } from '../support/route-checks.ts';

let t: TestService;
let token: string;

beforeAll(async () => {
  t = await startTestService({ NFSE_ORG_RATE_LIMIT: '100000' });
  token = (await t.createOrganization('pro')).token;
});
afterAll(async () => {
  await t?.close();
});

const CREATE_FIELDS = [
  'id',
  'name',
  'cnpj',
  'razaoSocial',
  'codigoMunicipio',
  'ambiente',
  'regimeTributario',
  'crt',
  'serieNfse',
  'serieNfe',
  'serieNfce',
  'tributacaoIss',
  'cstPisCofins',
  'defaultCstIbscbs',
  'defaultClassificacaoTributaria',
  'defaultIndicadorOperacao',
  'defaultNbs',
  'danfeTemplate',
  'active',
  'createdAt',
  'warnings',
].sort();

function fullBody(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Loja Centro',
    cnpj: nextCnpj(),
    razaoSocial: 'COMERCIO CENTRO LTDA',
    inscricaoMunicipal: '1234567',
    inscricaoEstadual: '110042490114',
    regimeTributario: '1',
    codigoMunicipio: '3304557',
    email: 'fiscal@centro.com.br',
    telefone: '(11) 3333-4444',
    description: 'Head office',
    endereco: {
      logradouro: 'Avenida Paulista',
      numero: '1000',
      complemento: 'Sala 5',
      bairro: 'Bela Vista',
      cidade: 'São Paulo',
      uf: 'SP',
      cep: '01310100',
    },
    codigoTributacao: '010101',
    tributacaoIss: 1,
    serieNfse: '900',
    aliquotaSimples: 6.5,
    regimeIss: 2,
    codigoServicoSp: '02919',
    cnae: '6201-5/01',
    basicAuthUsuario: 'usuario',
    basicAuthSenha: 'basic-auth-secret-XYZ',
    ambiente: 1,
    serieNfe: 1,
    serieNfce: 2,
    cscId: '000001',
    cscToken: 'csc-token-secret-ABC',
    cstPisCofins: '01',
    aliquotaPis: 0.65,
    aliquotaCofins: 3,
    tipoRetencaoPisCofins: 0,
    defaultCstIbscbs: '000',
    defaultClassificacaoTributaria: '000001',
    defaultIndicadorOperacao: '100301',
    defaultNbs: '115021000',
    danfeTemplate: 'retrato_logo',
    ...overrides,
  };
}

async function create(body: Record<string, unknown>, key = token) {
  return t.request('POST', '/org/projects', { key, body });
}

describe('POST /org/projects', () => {
  it('creates a project with every field of 2.1 and answers exactly the create fields', async () => {
    const body = fullBody();
    const res = await create(body);
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(CREATE_FIELDS);
    expect(res.body).toMatchObject({
      name: 'Loja Centro',
      cnpj: body.cnpj,
      razaoSocial: 'COMERCIO CENTRO LTDA',
      codigoMunicipio: '3304557',
      ambiente: 1,
      regimeTributario: '1',
      crt: 3,
      serieNfse: '900',
      serieNfe: 1,
      serieNfce: 2,
      tributacaoIss: 1,
      cstPisCofins: '01',
      defaultCstIbscbs: '000',
      defaultClassificacaoTributaria: '000001',
      defaultIndicadorOperacao: '100301',
      defaultNbs: '115021000',
      danfeTemplate: 'retrato_logo',
      active: true,
    });
    expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
    expect(res.body.warnings).toEqual([]);
    expect(res.text).not.toContain('basic-auth-secret-XYZ');
    expect(res.text).not.toContain('csc-token-secret-ABC');
  });

  it('applies the defaults and nulls of an otherwise empty project', async () => {
    const res = await create(projectBody());
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      serieNfse: '1608',
      ambiente: 2,
      danfeTemplate: 'padrao',
      regimeTributario: null,
      crt: null,
      serieNfe: null,
      serieNfce: null,
      codigoMunicipio: null,
      tributacaoIss: null,
      cstPisCofins: null,
      defaultNbs: null,
    });
  });

  it('derives crt from regimeTributario (1→3, 2→4, 3→1, 3e→2)', async () => {
    for (const [regime, crt] of [
      ['1', 3],
      ['2', 4],
      ['3', 1],
      ['3e', 2],
    ] as const) {
      const res = await create(projectBody({ regimeTributario: regime }));
      expect(res.status, res.text).toBe(201);
      expect(res.body.crt).toBe(crt);
    }
  });

  it('accepts a formatted CNPJ and stores the 14 digits', async () => {
    const cnpj = nextCnpj();
    const formatted = `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;
    const res = await create(projectBody({ cnpj: formatted }));
    expect(res.status, res.text).toBe(201);
    expect(res.body.cnpj).toBe(cnpj);
  });

  it('refuses an invalid CNPJ (check digits, length, letters), formatted or not', async () => {
    const good = nextCnpj();
    const badDigit = `${good.slice(0, 13)}${(Number(good[13]) + 1) % 10}`;
    for (const cnpj of [badDigit, '11.222.333/0001-82', '1122233300018', '11111111111111', 'abcdefghijklmn', '']) {
      const res = await create(projectBody({ cnpj }));
      expect(res.status, `${cnpj}: ${res.text}`).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('cnpj');
      if (cnpj !== '') expect(res.body.code).toBe('INVALID_CNPJ');
    }
  });

  it('names each missing required field', async () => {
    const res = await create({});
    expectProblem(res, 400, 'VALIDATION_FAILED');
    const fields = res.body.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['name', 'cnpj', 'razaoSocial']));
    const blank = await create(projectBody({ name: '   ' }));
    expectProblem(blank, 400, 'VALIDATION_FAILED');
    expect(blank.body.errors).toEqual([{ field: 'name', message: 'must not be blank' }]);
  });

  it('refuses an IBGE code that is not in the municipality table', async () => {
    for (const code of ['9999999', '3550309', '123', 'abcdefg']) {
      const res = await create(projectBody({ codigoMunicipio: code }));
      expect(res.status, res.text).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('codigoMunicipio');
    }
    const res = await create(projectBody({ codigoMunicipio: '9999999' }));
    expectProblem(res, 400, 'UNKNOWN_MUNICIPALITY');
    // an existing one far from the capitals
    expect((await create(projectBody({ codigoMunicipio: '1100015' }))).status).toBe(201);
  });

  const invalid: [string, unknown, string?][] = [
    ['regimeTributario', '4'],
    ['regimeTributario', 'mei'],
    ['tributacaoIss', 5],
    ['tributacaoIss', 'one'],
    ['regimeIss', 0],
    ['ambiente', 3],
    ['ambiente', null],
    ['tipoRetencaoPisCofins', 10],
    ['danfeTemplate', 'fancy'],
    ['serieNfse', '123456'],
    ['serieNfse', 'A1'],
    ['serieNfse', ''],
    ['serieNfe', 0],
    ['serieNfe', 1000],
    ['serieNfce', 1.5],
    ['serieNfce', -1],
    ['cstPisCofins', '1'],
    ['cstPisCofins', '001'],
    ['defaultCstIbscbs', '00'],
    ['defaultCstIbscbs', 'abc'],
    ['defaultClassificacaoTributaria', '12345'],
    ['defaultIndicadorOperacao', '1234567'],
    ['defaultNbs', '12345678'],
    ['defaultNbs', '1.1502.10.00'],
    ['codigoServicoSp', '1234'],
    ['codigoServicoSp', '123456'],
    ['cnae', '62015'],
    ['email', 'not-an-email'],
    ['email', 'a@'],
    ['aliquotaSimples', 101],
    ['aliquotaPis', -1],
    ['aliquotaCofins', 'x'],
    ['telefone', 'call me'],
    ['endereco', 'Rua A, 1'],
    ['endereco', { uf: 'XX' }, 'endereco.uf'],
    ['endereco', { cep: '01310-100' }, 'endereco.cep'],
    ['endereco', { pais: 'BR' }, 'endereco.pais'],
    ['unknownField', 1],
    ['name', 'x'.repeat(201)],
  ];
  it.each(invalid)('refuses %s = %j with a 400 naming the field', async (field, value, expectedField) => {
    const res = await create(projectBody({ [field]: value }));
    expect(res.status, res.text).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(expectedField ?? field);
    for (const e of res.body.errors) expect(e.message.length).toBeGreaterThan(3);
  });

  it('explains the formatted fields in words, not regular expressions', async () => {
    const res = await create(projectBody({ serieNfse: '123456', defaultNbs: '1' }));
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        { field: 'serieNfse', message: 'must be 1 to 5 digits' },
        { field: 'defaultNbs', message: 'must be 9 digits' },
      ]),
    );
  });

  it('accepts the limits of the ranges', async () => {
    const res = await create(
      projectBody({ serieNfse: '99999', serieNfe: 999, serieNfce: 1, aliquotaSimples: 0, tipoRetencaoPisCofins: 9 }),
    );
    expect(res.status, res.text).toBe(201);
  });

  it('refuses a duplicate CNPJ among active projects with 409 and existingProjectId', async () => {
    const cnpj = nextCnpj();
    const first = await create(projectBody({ cnpj }));
    expect(first.status).toBe(201);
    const formatted = `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;
    const dup = await create(projectBody({ cnpj: formatted }));
    expectProblem(dup, 409, 'CNPJ_ALREADY_REGISTERED');
    expect(dup.body.existingProjectId).toBe(first.body.id);

    // another organization may register the same CNPJ
    const other = await t.createOrganization('pro', 'Outra');
    expect((await create(projectBody({ cnpj }), other.token)).status).toBe(201);

    // once the project is deleted the CNPJ is free again
    expect((await t.request('DELETE', `/org/projects/${first.body.id}`, { key: token })).status).toBe(204);
    const again = await create(projectBody({ cnpj }));
    expect(again.status, again.text).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
  });

  it('refuses concurrent duplicates: exactly one of several parallel creations wins', async () => {
    const cnpj = nextCnpj();
    const results = await Promise.all(Array.from({ length: 5 }, () => create(projectBody({ cnpj }))));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
  });
});

describe('plan rules', () => {
  it("enforces the plan's project limit on active projects only (free: 1)", async () => {
    const free = await t.createOrganization('free', 'Free Org');
    const first = await create(projectBody(), free.token);
    expect(first.status).toBe(201);
    const second = await create(projectBody(), free.token);
    expectProblem(second, 403, 'PLAN_PROJECT_LIMIT');
    expect(await t.request('DELETE', `/org/projects/${first.body.id}`, { key: free.token })).toMatchObject({
      status: 204,
    });
    expect((await create(projectBody(), free.token)).status).toBe(201);
  });

  it('holds the limit under concurrent creations', async () => {
    const dev = await t.createOrganization('dev', 'Dev Org');
    const results = await Promise.all(Array.from({ length: 6 }, () => create(projectBody(), dev.token)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(3);
    for (const r of results.filter((r) => r.status !== 201)) expectProblem(r, 403, 'PLAN_PROJECT_LIMIT');
  });

  it('needs a plan that allows a custom logo for the logo templates (create and update)', async () => {
    const dev = await t.createOrganization('dev', 'Dev Logo');
    for (const template of ['retrato_logo', 'paisagem_logo']) {
      const res = await create(projectBody({ danfeTemplate: template }), dev.token);
      expectProblem(res, 403, 'PLAN_LOGO_NOT_ALLOWED');
      expect(res.body.errors[0].field).toBe('danfeTemplate');
    }
    const ok = await create(projectBody({ danfeTemplate: 'padrao' }), dev.token);
    expect(ok.status).toBe(201);
    const patch = await t.request('PATCH', `/org/projects/${ok.body.id}`, {
      key: dev.token,
      body: { danfeTemplate: 'paisagem_logo' },
    });
    expectProblem(patch, 403, 'PLAN_LOGO_NOT_ALLOWED');
    // after an upgrade the same request passes
    const up = await t.request('PUT', `/admin/organizations/${dev.id}/plan`, {
      key: t.adminKey,
      body: { plan: 'pro' },
    });
    expect(up.status).toBe(200);
    const again = await t.request('PATCH', `/org/projects/${ok.body.id}`, {
      key: dev.token,
      body: { danfeTemplate: 'paisagem_logo' },
    });
    expect(again.status, again.text).toBe(200);
  });
});

describe('GET /org/projects/{id}', () => {
  it('returns every field, endereco as an object, hasCscToken, and never the write-only values', async () => {
    const body = fullBody();
    const created = await create(body);
    const res = await t.request('GET', `/org/projects/${created.body.id}`, { key: token });
    expect(res.status).toBe(200);
    const { basicAuthSenha: _s, cscToken: _c, ...readable } = body;
    expect(res.body).toMatchObject({ ...readable, cnae: '6201501', crt: 3, hasCscToken: true, active: true });
    expect(res.body.endereco).toEqual(body.endereco);
    for (const field of ['basicAuthSenha', 'cscToken', 'basicAuthSenhaSealed', 'cscTokenSealed', 'certificate']) {
      expect(res.body).not.toHaveProperty(field);
    }
    expect(res.text).not.toContain('basic-auth-secret-XYZ');
    expect(res.text).not.toContain('csc-token-secret-ABC');
    expect(typeof res.body.updatedAt).toBe('string');

    // sealed at rest under the master key, not stored in clear
    const row = await t.service.ctx.db.query.projects.findFirst({ where: (p, { eq }) => eq(p.id, created.body.id) });
    expect(JSON.stringify(row)).not.toContain('basic-auth-secret-XYZ');
    expect(JSON.stringify(row)).not.toContain('csc-token-secret-ABC');
    const master = t.service.ctx.config.masterKey;
    expect(openSecret(Buffer.from(row!.basicAuthSenhaSealed!, 'base64'), master).toString()).toBe(
      'basic-auth-secret-XYZ',
    );
    expect(openSecret(Buffer.from(row!.cscTokenSealed!, 'base64'), master).toString()).toBe('csc-token-secret-ABC');
  });

  it('shows null for every field without a value, and an endereco object of nulls', async () => {
    const created = await create(projectBody());
    const res = await t.request('GET', `/org/projects/${created.body.id}`, { key: token });
    expect(res.body.endereco).toEqual({
      logradouro: null,
      numero: null,
      complemento: null,
      bairro: null,
      cidade: null,
      uf: null,
      cep: null,
    });
    for (const field of [
      'inscricaoMunicipal',
      'inscricaoEstadual',
      'email',
      'telefone',
      'description',
      'codigoTributacao',
      'aliquotaSimples',
      'regimeIss',
      'codigoServicoSp',
      'cnae',
      'basicAuthUsuario',
      'cscId',
      'aliquotaPis',
      'aliquotaCofins',
      'tipoRetencaoPisCofins',
    ]) {
      expect(res.body[field], field).toBeNull();
    }
    expect(res.body.hasCscToken).toBe(false);
  });
});

describe('PATCH /org/projects/{id}', () => {
  it('updates a subset, removes values with null, merges endereco and answers {updated, id}', async () => {
    const created = await create(fullBody());
    const id = created.body.id;
    const res = await t.request('PATCH', `/org/projects/${id}`, {
      key: token,
      body: {
        name: 'Novo Nome',
        aliquotaSimples: null,
        serieNfe: null,
        cscToken: null,
        cscId: null,
        regimeIss: null,
        cstPisCofins: null,
        danfeTemplate: null,
        regimeTributario: '2',
        endereco: { numero: '2000', complemento: null },
        basicAuthSenha: 'another-secret-QQQ',
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ updated: true, id, warnings: [] });
    const view = await t.request('GET', `/org/projects/${id}`, { key: token });
    expect(view.body).toMatchObject({
      name: 'Novo Nome',
      aliquotaSimples: null,
      serieNfe: null,
      serieNfce: 2,
      hasCscToken: false,
      cscId: null,
      regimeIss: null,
      cstPisCofins: null,
      danfeTemplate: 'padrao',
      regimeTributario: '2',
      crt: 4,
      razaoSocial: 'COMERCIO CENTRO LTDA',
    });
    expect(view.body.endereco).toEqual({
      logradouro: 'Avenida Paulista',
      numero: '2000',
      complemento: null,
      bairro: 'Bela Vista',
      cidade: 'São Paulo',
      uf: 'SP',
      cep: '01310100',
    });
    expect(view.text).not.toContain('another-secret-QQQ');
    expect(new Date(view.body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(view.body.createdAt).getTime());
  });

  it('keeps the CNPJ immutable (the same value, formatted or not, is accepted)', async () => {
    const created = await create(projectBody());
    const cnpj = created.body.cnpj as string;
    const changed = await t.request('PATCH', `/org/projects/${created.body.id}`, {
      key: token,
      body: { cnpj: nextCnpj() },
    });
    expectProblem(changed, 400, 'VALIDATION_FAILED');
    expect(changed.body.errors).toEqual([{ field: 'cnpj', message: 'is immutable after creation' }]);
    const same = await t.request('PATCH', `/org/projects/${created.body.id}`, {
      key: token,
      body: {
        cnpj: `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`,
      },
    });
    expect(same.status, same.text).toBe(200);
  });

  it('validates like create (400 naming the field) and refuses null on required fields', async () => {
    const created = await create(projectBody());
    for (const [field, value] of [
      ['codigoMunicipio', '0000000'],
      ['serieNfce', 0],
      ['defaultIndicadorOperacao', '12'],
      ['name', null],
      ['razaoSocial', ''],
      ['serieNfse', null],
    ] as const) {
      const res = await t.request('PATCH', `/org/projects/${created.body.id}`, {
        key: token,
        body: { [field]: value },
      });
      expect(res.status, `${field}: ${res.text}`).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });
});

describe('DELETE /org/projects/{id}', () => {
  it('answers 204, deactivates, revokes every key in the same step, keeps numbering and answers 404 afterwards', async () => {
    const created = await create(projectBody());
    const id = created.body.id;
    const keys = await Promise.all(
      [1, 2].map((n) => t.request('POST', `/org/projects/${id}/api-keys`, { key: token, body: { name: `k${n}` } })),
    );
    await t.request('PATCH', `/org/projects/${id}/numeracao`, { key: token, body: { ultimoNumeroNfse: 42 } });
    for (const k of keys) {
      expect((await t.request('GET', `/invoices/${crypto.randomUUID()}/status`, { key: k.body.key })).status).toBe(404);
    }

    const del = await t.request('DELETE', `/org/projects/${id}`, { key: token });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');

    for (const k of keys) {
      const refused = await t.request('GET', `/invoices/${crypto.randomUUID()}/status`, { key: k.body.key });
      expectProblem(refused, 401, 'UNAUTHENTICATED');
    }
    const view = await t.request('GET', `/org/projects/${id}`, { key: token });
    expect(view.status).toBe(200);
    expect(view.body.active).toBe(false);

    expectProblem(await t.request('DELETE', `/org/projects/${id}`, { key: token }), 404, 'PROJECT_NOT_FOUND');
    expectProblem(
      await t.request('PATCH', `/org/projects/${id}`, { key: token, body: { name: 'x' } }),
      404,
      'PROJECT_NOT_FOUND',
    );
    for (const [method, path] of [
      ['GET', `/org/projects/${id}/numeracao`],
      ['GET', `/org/projects/${id}/api-keys`],
      ['POST', `/org/projects/${id}/api-keys`],
    ] as const) {
      const res = await t.request(method, path, { key: token, body: method === 'POST' ? { name: 'x' } : undefined });
      expectProblem(res, 404, 'PROJECT_NOT_FOUND');
    }

    const db = t.service.ctx.db;
    const row = await db.query.projects.findFirst({ where: (p, { eq }) => eq(p.id, id) });
    expect(row!.active).toBe(false);
    expect(row!.deletedAt).not.toBeNull();
    const keyRows = await db.query.apiKeys.findMany({ where: (k, { eq }) => eq(k.projectId, id) });
    expect(keyRows).toHaveLength(2);
    for (const k of keyRows) {
      expect(k.active).toBe(false);
      expect(k.revokedAt).not.toBeNull();
    }
    const [n] = await db
      .select()
      .from(numbering)
      .where(and(eq(numbering.projectId, id), eq(numbering.kind, 'nfse')));
    expect(n!.lastNumber).toBe(42);
  });

  it('answers 404 for an unknown or malformed id', async () => {
    expectProblem(
      await t.request('DELETE', `/org/projects/${crypto.randomUUID()}`, { key: token }),
      404,
      'PROJECT_NOT_FOUND',
    );
    expectProblem(await t.request('DELETE', '/org/projects/not-a-uuid', { key: token }), 404, 'PROJECT_NOT_FOUND');
  });
});

describe('GET /org/projects', () => {
  it('pages, counts, filters inactive projects and shows the list item fields', async () => {
    const org = await t.createOrganization('enterprise', 'Lista');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await create(projectBody({ name: `P${i}`, codigoMunicipio: '3304557' }), org.token);
      ids.push(res.body.id);
    }
    await t.request('POST', `/org/projects/${ids[4]}/api-keys`, { key: org.token, body: { name: 'k' } });
    await t.request('DELETE', `/org/projects/${ids[0]}`, { key: org.token });

    const page1 = await t.request('GET', '/org/projects?limit=2', { key: org.token });
    expect(page1.status).toBe(200);
    expect(page1.body.pagination).toEqual({ page: 1, limit: 2, total: 4 });
    expect(page1.body.data).toHaveLength(2);
    expect(Object.keys(page1.body.data[0]).sort()).toEqual(
      ['id', 'name', 'cnpj', 'codigoMunicipio', 'active', 'hasCertificate', 'hasApiKey', 'createdAt'].sort(),
    );
    // newest first
    expect(page1.body.data[0]).toMatchObject({ id: ids[4], hasApiKey: true, hasCertificate: false, active: true });
    expect(page1.body.data[1]).toMatchObject({ id: ids[3], hasApiKey: false, codigoMunicipio: '3304557' });

    const page3 = await t.request('GET', '/org/projects?limit=2&page=3', { key: org.token });
    expect(page3.body.data).toEqual([]);
    expect(page3.body.pagination.total).toBe(4);

    const all = await t.request('GET', '/org/projects?active=false', { key: org.token });
    expect(all.body.pagination).toEqual({ page: 1, limit: 20, total: 5 });
    expect(all.body.data.find((p: { id: string }) => p.id === ids[0]).active).toBe(false);

    const defaults = await t.request('GET', '/org/projects', { key: org.token });
    expect(defaults.body.pagination).toEqual({ page: 1, limit: 20, total: 4 });
    expect(defaults.body.data.every((p: { active: boolean }) => p.active)).toBe(true);

    const max = await t.request('GET', '/org/projects?limit=100', { key: org.token });
    expect(max.status).toBe(200);
    for (const query of ['limit=101', 'limit=0', 'page=0', 'page=-1', 'limit=abc', 'active=maybe']) {
      const res = await t.request('GET', `/org/projects?${query}`, { key: org.token });
      expectProblem(res, 400, 'INVALID_QUERY');
    }
  });

  it('lists only the projects of the caller organization', async () => {
    const one = await t.createOrganization('pro', 'Uma');
    const two = await t.createOrganization('pro', 'Duas');
    const p = await create(projectBody(), one.token);
    const list = await t.request('GET', '/org/projects?active=false', { key: two.token });
    expect(list.body.data.map((x: { id: string }) => x.id)).not.toContain(p.body.id);
    expect(list.body.pagination.total).toBe(0);
  });
});

describe('stored row', () => {
  it('keeps the org binding: a project row belongs to the organization that created it', async () => {
    const org = await t.createOrganization('pro', 'Dona');
    const res = await create(projectBody(), org.token);
    const [row] = await t.service.ctx.db.select().from(projects).where(eq(projects.id, res.body.id));
    expect(row!.orgId).toBe(org.id);
  });
});
