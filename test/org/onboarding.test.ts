import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { exportPkcs12WithOpenssl } from '../support/openssl-pkcs12.ts';
import { expectProblem, nextCnpj } from '../support/route-checks.ts';
import { hasTool } from '../support/tools.ts';

/**
 * Spec 5.8 as a new user follows it, over HTTP: the operator creates the organization (its token stands
 * for the dashboard's), then POST /org/projects, POST …/certificate with a PKCS#12 made here, POST
 * …/api-keys, and the returned key authenticates on the project routes.
 */

let t: TestService;

beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t?.close();
});

type Encryption = 'aes256' | '3des' | 'openssl-legacy';
const encryptions: Encryption[] = ['aes256', '3des', ...(hasTool('openssl') ? (['openssl-legacy'] as const) : [])];

describe.each(encryptions)('onboarding with a %s PKCS#12', (encryption) => {
  it('goes from a new organization to a working project key', async () => {
    // 1. the organization and its token
    const created = await t.request('POST', '/admin/organizations', {
      key: t.adminKey,
      body: { name: `Escritório ${encryption}`, plan: 'pro' },
    });
    expect(created.status, created.text).toBe(201);
    const orgToken = created.body.token as string;
    expect(orgToken).toMatch(/^svc_org_/);

    // 2. the project
    const cnpj = nextCnpj();
    const project = await t.request('POST', '/org/projects', {
      key: orgToken,
      body: {
        name: 'Minha Empresa',
        cnpj: `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`,
        razaoSocial: 'MINHA EMPRESA DE SERVICOS LTDA',
        codigoMunicipio: '3106200',
        regimeTributario: '3',
        inscricaoMunicipal: '998877',
        email: 'contato@minhaempresa.com.br',
        endereco: {
          logradouro: 'Rua da Bahia',
          numero: '10',
          bairro: 'Centro',
          cidade: 'Belo Horizonte',
          uf: 'MG',
          cep: '30160010',
        },
      },
    });
    expect(project.status, project.text).toBe(201);
    expect(project.body).toMatchObject({ cnpj, crt: 1, active: true });
    const projectId = project.body.id as string;

    // 3. the certificate (made here, with the chosen encryption)
    const password = `senha-${encryption}`;
    const a1 = createA1Certificate({
      cnpj,
      name: 'MINHA EMPRESA DE SERVICOS LTDA',
      password,
      encryption: encryption === '3des' ? '3des' : 'aes256',
    });
    const pfx =
      encryption === 'openssl-legacy'
        ? exportPkcs12WithOpenssl({ keyPem: a1.keyPem, certPem: a1.certPem, password, legacy: true })
        : a1.pfx;
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(pfx)], { type: 'application/x-pkcs12' }), 'minha-empresa.pfx');
    form.set('password', password);
    const cert = await t.request('POST', `/org/projects/${projectId}/certificate`, { key: orgToken, rawBody: form });
    expect(cert.status, cert.text).toBe(201);
    expect(cert.body).toMatchObject({
      fileName: 'minha-empresa.pfx',
      subjectCN: `MINHA EMPRESA DE SERVICOS LTDA:${cnpj}`,
      active: true,
    });
    expect(cert.text).not.toContain(password);

    // 4. the project key
    const key = await t.request('POST', `/org/projects/${projectId}/api-keys`, {
      key: orgToken,
      body: { name: 'integração' },
    });
    expect(key.status, key.text).toBe(201);
    const apiKey = key.body.key as string;
    expect(apiKey).toMatch(/^svc_(?!org_)/);

    // 5. the key authenticates on project routes (an unknown invoice is a 404, not a 401)…
    expectProblem(
      await t.request('GET', `/invoices/${randomUUID()}/status`, { key: apiKey }),
      404,
      'INVOICE_NOT_FOUND',
    );
    // …and is refused on the organization routes, as the organization token is on project routes
    expectProblem(await t.request('GET', '/org/projects', { key: apiKey }), 403, 'WRONG_KEY_KIND');
    expectProblem(await t.request('GET', `/invoices/${randomUUID()}/status`, { key: orgToken }), 403, 'WRONG_KEY_KIND');

    // the organization sees a ready project
    const list = await t.request('GET', '/org/projects', { key: orgToken });
    expect(list.body.data).toEqual([
      expect.objectContaining({ id: projectId, hasCertificate: true, hasApiKey: true, active: true }),
    ]);
  });
});
