import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { waitForInvoice } from '../support/onboarding.ts';

/**
 * The README's example requests, run as written: every `curl … -X POST …/api/v1/<path> … -d '<json>'` of README.md
 * is extracted from the file (never copied here) and sent to a real service with the sandbox government.
 */
interface ReadmeRequest {
  path: string;
  body: Record<string, unknown>;
}

function readmeRequests(): ReadmeRequest[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const out: ReadmeRequest[] = [];
  const curl = /curl -s -X POST http:\/\/127\.0\.0\.1:3000\/api\/v1(\/[^\s]+)[^\n]*?-d '([\s\S]*?)'\n/g;
  for (const m of readme.matchAll(curl)) out.push({ path: m[1]!, body: JSON.parse(m[2]!) });
  return out;
}

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

describe("the README's example requests", () => {
  it('are complete requests of a national-adherent project that really issue, and tell their adjustments', async () => {
    const requests = readmeRequests();
    const projects = requests.filter((r) => r.path === '/org/projects');
    const invoices = requests.filter((r) => r.path === '/emitir');
    expect(projects).toHaveLength(1);
    expect(invoices.length).toBeGreaterThanOrEqual(3);
    // the example company is in a municipality of the national environment (not São Paulo)
    expect(projects[0]!.body.codigoMunicipio).toBe('3304557');

    const org = await t.createOrganization('pro');
    const project = await t.request('POST', '/org/projects', { key: org.token, body: projects[0]!.body });
    expect(project.status, project.text).toBe(201);
    const a1 = createA1Certificate({
      cnpj: String(projects[0]!.body.cnpj),
      name: String(projects[0]!.body.razaoSocial),
      password: 'segredo-123',
    });
    const form = new FormData();
    form.set('password', a1.password);
    form.set('file', new Blob([new Uint8Array(a1.pfx)], { type: 'application/x-pkcs12' }), 'empresa.pfx');
    const cert = await t.request('POST', `/org/projects/${project.body.id}/certificate`, {
      key: org.token,
      rawBody: form,
    });
    expect(cert.status, cert.text).toBe(201);
    const key = await t.request('POST', `/org/projects/${project.body.id}/api-keys`, {
      key: org.token,
      body: { name: 'readme' },
    });
    expect(key.status, key.text).toBe(201);

    const accepted: { invoiceId: string; warnings: { code: string; field: string | null }[] }[] = [];
    for (const request of invoices) {
      const res = await t.request('POST', request.path, { key: key.body.key, body: request.body });
      expect(res.status, `${JSON.stringify(request.body)} → ${res.text}`).toBe(202);
      expect(Array.isArray(res.body.warnings)).toBe(true);
      accepted.push(res.body);
    }
    // the first example: Simples Nacional, no IBS/CBS data → issued without the group, and told so
    expect(accepted[0]!.warnings.map((w) => w.code)).toContain('IBSCBS_GROUP_OMITTED');
    // the foreign taker written with the fields of spec 2.7 only: the layout's region and district defaulted
    const foreign = invoices.findIndex((r) => (r.body.tomador as { nif?: string }).nif);
    expect(foreign).toBeGreaterThanOrEqual(0);
    expect(accepted[foreign]!.warnings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'FOREIGN_ADDRESS_DEFAULT_APPLIED', field: 'tomador.endereco.estadoProvincia' }),
        expect.objectContaining({ code: 'FOREIGN_ADDRESS_DEFAULT_APPLIED', field: 'tomador.endereco.bairro' }),
      ]),
    );
    for (const [i, a] of accepted.entries()) {
      const status = await waitForInvoice(t, key.body.key, a.invoiceId, 30_000);
      expect(status.status, `README example ${i + 1}: ${JSON.stringify(status)}`).toBe('issued');
      // the status keeps the warnings of the 202
      expect(status.warnings).toEqual(a.warnings);
    }
  });
});
