import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoices, projects } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, onboardProject, waitForInvoice } from '../support/onboarding.ts';

/**
 * Issue #13, as a user: a Simples Nacional company in Arroio do Meio/RS, whose own provider (Tecnos, ABRASF 2.01) is
 * not implemented here but which adheres to the national emitter, is refused until its project chooses the national
 * environment (`emissorNacional: true`), then issues through the national sandbox (which applies the adhesion rule
 * E0037 from the same official list). A project whose municipality does not adhere is never switched to it.
 */
const ARROIO_DO_MEIO = '4301008';
const ARROIO_ADDRESS = {
  logradouro: 'Rua Doutor João Carlos Machado',
  numero: '500',
  bairro: 'Centro',
  cidade: 'Arroio do Meio',
  uf: 'RS',
  cep: '95940000',
};
const GUARABIRA = '2506301'; // Elmar (PB), not in the adhesion list

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.close());

const creditsUsed = async (orgToken: string) =>
  (await t.request('GET', '/org/settings', { key: orgToken })).body.subscription.creditsUsed as number;

describe('the national emitter by the project choice (emissorNacional), over HTTP', () => {
  it('a Simples project in an adherent Tecnos city: 422 naming the choice, then issued through the national environment', async () => {
    const p = await onboardProject(t, {
      cnpj: '11222333000181',
      project: {
        regimeTributario: '3',
        aliquotaSimples: 4,
        regimeIss: 1,
        codigoMunicipio: ARROIO_DO_MEIO,
        endereco: ARROIO_ADDRESS,
      },
    });
    const coverage = await t.request('GET', `/cobertura/cidades?q=${ARROIO_DO_MEIO}`, { key: p.apiKey });
    expect(coverage.body.data[0]).toMatchObject({
      nome: 'Arroio do Meio',
      provider: 'Tecnos',
      implemented: false,
      nationalEmitterAdherent: true,
      nationalEmitterByChoice: true,
    });

    const before = await creditsUsed(p.orgToken);
    const refused = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body).toMatchObject({
      code: 'ENGINE_NOT_AVAILABLE',
      provider: 'Tecnos',
      coverageStatus: 'covered',
      emissorNacional: false,
    });
    expect(refused.body.detail).toContain('Tecnos');
    expect(refused.body.detail).toContain('emissorNacional to true');
    expect(refused.body.errors[0].field).toBe('project.codigoMunicipio');
    expect(await creditsUsed(p.orgToken)).toBe(before);

    const chosen = await t.request('PATCH', `/org/projects/${p.projectId}`, {
      key: p.orgToken,
      body: { emissorNacional: true },
    });
    expect(chosen.status, chosen.text).toBe(200);
    expect(chosen.body.warnings).toEqual([]);

    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(202);
    const status = await waitForInvoice(t, p.apiKey, res.body.invoiceId, 30_000);
    expect(status.status, JSON.stringify(status)).toBe('issued');
    expect(status.engine).toBe('national');
    expect(status.chNFSe).toMatch(/^\d{50}$/);
    const [row] = await t.service.ctx.db.select().from(invoices).where(eq(invoices.id, res.body.invoiceId));
    expect(row!.engine).toBe('national');
    // a Simples ME/EPP DPS issued in Arroio do Meio: the sandbox checked its adhesion (E0037)
    expect(row!.declarationXml).toContain(`<cLocEmi>${ARROIO_DO_MEIO}</cLocEmi>`);
    expect(row!.declarationXml).toContain('<opSimpNac>3</opSimpNac>');
    expect(await creditsUsed(p.orgToken)).toBe(before + 1);
  });

  it('a project that chose it in a municipality that does not adhere is refused, never sent to its own system', async () => {
    const p = await onboardProject(t, {
      cnpj: '11222333000262',
      project: { regimeTributario: '3', aliquotaSimples: 4, codigoMunicipio: GUARABIRA },
    });
    // the API refuses the choice there …
    const patch = await t.request('PATCH', `/org/projects/${p.projectId}`, {
      key: p.orgToken,
      body: { emissorNacional: true },
    });
    expect(patch.status, patch.text).toBe(400);
    expect(patch.body.errors[0].field).toBe('emissorNacional');
    // … and a choice stored before the municipality left the adhesion list is refused at POST /emitir
    await t.service.ctx.db.update(projects).set({ emissorNacional: true }).where(eq(projects.id, p.projectId));
    const res = await t.request('POST', '/emitir', { key: p.apiKey, body: invoiceBody() });
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ code: 'ENGINE_NOT_AVAILABLE', family: 'national', emissorNacional: true });
    expect(res.body.errors[0].field).toBe('project.emissorNacional');
    expect(res.body.detail).toContain('Guarabira/PB (2506301) does not adhere to the national emitter');
  });
});
