import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { type OnboardedProject, onboardProject } from '../support/onboarding.ts';

/**
 * The project field `emissorNacional` (the national environment by the project's choice, issue #13): a boolean,
 * false by default, shown by GET, and accepted only where the municipality adheres to the national emitter.
 */
let t: TestService;
let p: OnboardedProject;
beforeAll(async () => {
  t = await startTestService();
  p = await onboardProject(t);
});
afterAll(async () => t?.close());

const ARROIO_DO_MEIO = '4301008'; // Tecnos, in the adhesion list
const GUARABIRA = '2506301'; // Elmar (PB), not in the adhesion list

function expectRefusal(res: { status: number; text: string; body: Record<string, unknown> }, place: string) {
  expect(res.status, res.text).toBe(400);
  expect(res.body.code).toBe('VALIDATION_FAILED');
  const errors = res.body.errors as { field: string; message: string }[];
  expect(errors.map((e) => e.field)).toEqual(['emissorNacional']);
  expect(errors[0]!.message).toContain(`${place} does not adhere to the national emitter`);
}

describe('project field emissorNacional', () => {
  it('is false by default, set and cleared with a boolean, and in the OpenAPI document', async () => {
    const path = `/org/projects/${p.projectId}`;
    expect((await t.request('GET', path, { key: p.orgToken })).body.emissorNacional).toBe(false);
    // Recife (the onboarding's municipality) adheres to the national emitter and routes there anyway
    const set = await t.request('PATCH', path, { key: p.orgToken, body: { emissorNacional: true } });
    expect(set.status, set.text).toBe(200);
    expect((await t.request('GET', path, { key: p.orgToken })).body.emissorNacional).toBe(true);
    for (const bad of ['sim', 2, {}]) {
      const res = await t.request('PATCH', path, { key: p.orgToken, body: { emissorNacional: bad } });
      expect(res.status, `${JSON.stringify(bad)}: ${res.text}`).toBe(400);
      expect(JSON.stringify(res.body)).toContain('emissorNacional');
    }
    expect((await t.request('GET', path, { key: p.orgToken })).body.emissorNacional).toBe(true);
    const cleared = await t.request('PATCH', path, { key: p.orgToken, body: { emissorNacional: false } });
    expect(cleared.status).toBe(200);
    expect((await t.request('GET', path, { key: p.orgToken })).body.emissorNacional).toBe(false);
    // the project routes coerce types (as for every field there): null, like false, is the default
    await t.request('PATCH', path, { key: p.orgToken, body: { emissorNacional: true } });
    expect((await t.request('PATCH', path, { key: p.orgToken, body: { emissorNacional: null } })).status).toBe(200);
    expect((await t.request('GET', path, { key: p.orgToken })).body.emissorNacional).toBe(false);

    const doc = (await t.request('GET', '/openapi.json')).body;
    const field = doc.components.schemas.CreateProjectRequest.properties.emissorNacional;
    expect(field.type).toBe('boolean');
    expect(field.description).toContain('Issue through the national environment (Sefin Nacional)');
    expect(field.description).toContain('nationalEmitterAdherent');
  });

  it('is created in an adherent municipality, and refused (400 naming the field) in one that does not adhere', async () => {
    const base = { name: 'Escolha', razaoSocial: 'ESCOLHA LTDA', regimeTributario: '3' };
    const created = await t.request('POST', '/org/projects', {
      key: p.orgToken,
      body: { ...base, cnpj: '11222333000262', codigoMunicipio: ARROIO_DO_MEIO, emissorNacional: true },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.body.warnings).toEqual([]);
    const refused = await t.request('POST', '/org/projects', {
      key: p.orgToken,
      body: { ...base, cnpj: '11222333000343', codigoMunicipio: GUARABIRA, emissorNacional: true },
    });
    expectRefusal(refused, 'Guarabira/PB (2506301)');
    const noMunicipality = await t.request('POST', '/org/projects', {
      key: p.orgToken,
      body: { ...base, cnpj: '11222333000343', emissorNacional: true },
    });
    expect(noMunicipality.status).toBe(400);
    expect(noMunicipality.body.errors).toEqual([
      { field: 'emissorNacional', message: 'needs a codigoMunicipio that adheres to the national emitter' },
    ]);
  });

  it('is refused on update in a municipality that does not adhere, and when the municipality changes to one', async () => {
    const created = await t.request('POST', '/org/projects', {
      key: p.orgToken,
      body: {
        name: 'Guarabira',
        cnpj: '11222333000424',
        razaoSocial: 'GUARABIRA LTDA',
        regimeTributario: '3',
        codigoMunicipio: GUARABIRA,
      },
    });
    expect(created.status, created.text).toBe(201);
    // Elmar is not implemented, and Guarabira does not adhere: the warning does not offer the choice
    expect(created.body.warnings[0].code).toBe('ENGINE_NOT_AVAILABLE');
    expect(created.body.warnings[0].message).not.toContain('emissorNacional');
    const path = `/org/projects/${created.body.id}`;
    expectRefusal(
      await t.request('PATCH', path, { key: p.orgToken, body: { emissorNacional: true } }),
      'Guarabira/PB (2506301)',
    );
    expect((await t.request('GET', path, { key: p.orgToken })).body.emissorNacional).toBe(false);

    // moved to an adherent municipality with the choice: accepted; the warning about Tecnos goes away
    const moved = await t.request('PATCH', path, {
      key: p.orgToken,
      body: { codigoMunicipio: ARROIO_DO_MEIO, emissorNacional: true },
    });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.warnings).toEqual([]);
    // moved back while the choice stands: refused, nothing changed
    expectRefusal(
      await t.request('PATCH', path, { key: p.orgToken, body: { codigoMunicipio: GUARABIRA } }),
      'Guarabira/PB (2506301)',
    );
    const view = (await t.request('GET', path, { key: p.orgToken })).body;
    expect(view).toMatchObject({ codigoMunicipio: ARROIO_DO_MEIO, emissorNacional: true });
    // dropping the choice with the move is fine
    const back = await t.request('PATCH', path, {
      key: p.orgToken,
      body: { codigoMunicipio: GUARABIRA, emissorNacional: false },
    });
    expect(back.status, back.text).toBe(200);
    expect(back.body.warnings[0]).toMatchObject({ code: 'ENGINE_NOT_AVAILABLE', field: 'codigoMunicipio' });
  });
});
