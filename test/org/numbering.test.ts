import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { expectProblem, projectBody } from '../support/route-checks.ts';

let t: TestService;
let token: string;

beforeAll(async () => {
  t = await startTestService({ NFSE_ORG_RATE_LIMIT: '100000' });
  token = (await t.createOrganization('pro')).token;
});
afterAll(async () => {
  await t?.close();
});

async function newProject(overrides: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/org/projects', { key: token, body: projectBody(overrides) });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

const patch = (id: string, body: unknown) => t.request('PATCH', `/org/projects/${id}/numeracao`, { key: token, body });
const get = (id: string) => t.request('GET', `/org/projects/${id}/numeracao`, { key: token });

describe('numbering (spec 2.2, rule 4.1.1)', () => {
  it('starts at 0 with the series of the project: nfse a string, nfe/nfce integers or null', async () => {
    const id = await newProject();
    const res = await get(id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      nfse: { ultimoNumero: 0, proximoNumero: 1, serie: '1608' },
      nfe: { ultimoNumero: 0, proximoNumero: 1, serie: null },
      nfce: { ultimoNumero: 0, proximoNumero: 1, serie: null },
    });
    await t.request('PATCH', `/org/projects/${id}`, {
      key: token,
      body: { serieNfse: '7', serieNfe: 3, serieNfce: 999 },
    });
    const after = await get(id);
    expect(after.body.nfse.serie).toBe('7');
    expect(after.body.nfe.serie).toBe(3);
    expect(after.body.nfce.serie).toBe(999);
  });

  it('raises numbers, ignores lower values (the greater wins) and answers the effective values', async () => {
    const id = await newProject({ serieNfe: 1 });
    const first = await patch(id, { ultimoNumeroNfse: 100, ultimoNumeroNfe: 7 });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      nfse: { ultimoNumero: 100, proximoNumero: 101, serie: '1608' },
      nfe: { ultimoNumero: 7, proximoNumero: 8, serie: 1 },
      nfce: { ultimoNumero: 0, proximoNumero: 1, serie: null },
    });
    const lower = await patch(id, { ultimoNumeroNfse: 50, ultimoNumeroNfce: 3 });
    expect(lower.status).toBe(200);
    expect(lower.body.nfse).toEqual({ ultimoNumero: 100, proximoNumero: 101, serie: '1608' });
    expect(lower.body.nfe.ultimoNumero).toBe(7);
    expect(lower.body.nfce).toEqual({ ultimoNumero: 3, proximoNumero: 4, serie: null });
    const same = await patch(id, { ultimoNumeroNfse: 100 });
    expect(same.body.nfse.ultimoNumero).toBe(100);
    const empty = await patch(id, {});
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(lower.body);
    expect((await get(id)).body).toEqual(lower.body);
  });

  it('keeps the greatest of concurrent updates', async () => {
    const id = await newProject();
    const values = [5, 900, 12, 899, 300, 1, 650, 42];
    const results = await Promise.all(values.map((v) => patch(id, { ultimoNumeroNfse: v })));
    for (const r of results) expect(r.status).toBe(200);
    expect((await get(id)).body.nfse.ultimoNumero).toBe(900);
  });

  it('accepts the largest numbers of each kind and refuses invalid values with a 400 naming the field', async () => {
    const id = await newProject();
    const max = await patch(id, { ultimoNumeroNfse: 999_999_999_999_999, ultimoNumeroNfe: 999_999_999 });
    expect(max.status, max.text).toBe(200);
    expect(max.body.nfse.proximoNumero).toBe(1_000_000_000_000_000);
    for (const [field, value] of [
      ['ultimoNumeroNfse', -1],
      ['ultimoNumeroNfse', 1.5],
      ['ultimoNumeroNfse', 'abc'],
      ['ultimoNumeroNfse', 1e16],
      ['ultimoNumeroNfe', 1_000_000_000],
      ['ultimoNumeroNfce', []],
      ['ultimoNumero', 1],
    ] as const) {
      const res = await patch(id, { [field]: value });
      expect(res.status, `${field}=${JSON.stringify(value)}: ${res.text}`).toBe(400);
      expectProblem(res, 400, 'VALIDATION_FAILED');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect((await get(id)).body.nfse.ultimoNumero).toBe(999_999_999_999_999);
    // null carries no number: it changes nothing
    const nulls = await patch(id, { ultimoNumeroNfce: null });
    expect(nulls.status).toBe(200);
    expect(nulls.body.nfce.ultimoNumero).toBe(0);
  });
});
