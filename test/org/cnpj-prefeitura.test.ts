import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Credential } from '../../src/engines/routing/families.ts';
import { municipalityRegistry } from '../../src/engines/routing/municipality-registry.ts';
import { unmetProjectRequirements } from '../../src/engines/routing/requirements.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject } from '../support/onboarding.ts';

/**
 * The city hall's CNPJ (`cnpjPrefeitura`): a public municipal parameter of the project, required by Agili (its
 * `UnidadeGestora`), validated with its check digits, and named at POST /emitir when an Agili city's project lacks it.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

const RONDONOPOLIS = '5107602';
const CITY_HALL = '03.347.101/0001-21';

describe("project parameter cnpjPrefeitura (the city hall's CNPJ)", () => {
  it('is required by the Agili engine, with the digital key, and satisfied when the project holds both', () => {
    const route = municipalityRegistry().find(RONDONOPOLIS) ?? null;
    expect(route?.parameters?.provider).toBe('Agili');
    const fields = { codigoMunicipio: RONDONOPOLIS, inscricaoMunicipal: '1', cnae: null, codigoServicoSp: null };
    const missing = unmetProjectRequirements(route, { fields, credentials: new Set<Credential>(['certificate']) });
    expect(missing.map((u) => u.field)).toEqual(['project.cscToken', 'project.cnpjPrefeitura']);
    const held = new Set<Credential>(['accessToken', 'cnpjPrefeitura']);
    expect(unmetProjectRequirements(route, { fields, credentials: held })).toEqual([]);
  });

  it('is stored as 14 digits, shown, refused without valid check digits, and removed with null', async () => {
    const p = await onboardProject(t);
    const path = `/org/projects/${p.projectId}`;
    const set = await t.request('PATCH', path, { key: p.orgToken, body: { cnpjPrefeitura: CITY_HALL } });
    expect(set.status, set.text).toBe(200);
    expect((await t.request('GET', path, { key: p.orgToken })).body.cnpjPrefeitura).toBe('03347101000121');
    for (const bad of ['03347101000122', '0334710100012', 'abc', 42]) {
      const res = await t.request('PATCH', path, { key: p.orgToken, body: { cnpjPrefeitura: bad } });
      expect(res.status, `${JSON.stringify(bad)}: ${res.text}`).toBe(400);
      expect(JSON.stringify(res.body)).toContain('cnpjPrefeitura');
    }
    const removed = await t.request('PATCH', path, { key: p.orgToken, body: { cnpjPrefeitura: null } });
    expect(removed.status).toBe(200);
    expect((await t.request('GET', path, { key: p.orgToken })).body.cnpjPrefeitura).toBeNull();
  });

  it('is named at POST /emitir when a project of an Agili city lacks it (400, nothing spent)', async () => {
    const p = await onboardProject(t, {
      project: { codigoMunicipio: RONDONOPOLIS, cscToken: '0f1e2d3c4b5a69788796a5b4c3d2e1f0' },
    });
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(400);
    expect(JSON.stringify(res.body)).toContain('project.cnpjPrefeitura');
  });
});
