import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import { DASHBOARD_DIR } from '../../src/http/routes/dashboard/serve-app.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { invoiceBody, PROVIDER_CNPJ, TAKER } from '../support/onboarding.ts';
import { type Receiver, startReceiver } from '../webhooks/support.ts';

/**
 * The dashboard in a real browser (playwright-core driving Debian's Chromium; `.ci/run` installs it): sign in →
 * create a project → upload its A1 certificate → create an API key → issue from the dashboard against the embedded
 * national sandbox → see it issued → download the PDF → cancel → webhook deliveries and a manual retry. Screenshots
 * are kept in test-artifacts/dashboard/.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const ARTIFACTS = join(root, 'test-artifacts', 'dashboard');
const CHROMIUM = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
  (p): p is string => !!p && existsSync(p),
);
const EMAIL = 'ana@empresa.com.br';
const PASSWORD = 'senha-do-painel-123';

/** The newest modification time of the files under `dir`. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

// skipped only where no Chromium exists outside CI; on CI (.ci/run installs it) a missing binary fails the test
const skip = !CHROMIUM && !process.env.CI;
if (skip) {
  console.warn(
    'test/dashboard/browser.test.ts skipped: no Chromium binary (apt-get install chromium, or set CHROMIUM_PATH)',
  );
}

describe.skipIf(skip)('dashboard in a real browser', () => {
  let t: TestService;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    if (!CHROMIUM) throw new Error("no Chromium binary: .ci/run installs Debian's chromium (or set CHROMIUM_PATH)");
    mkdirSync(ARTIFACTS, { recursive: true });
    const index = join(DASHBOARD_DIR, 'index.html');
    // the front-end as `npm ci` builds it (scripts/build-dashboard.mjs), rebuilt when web/ changed since
    const { buildDashboard, webRoot } = (await import(join(root, 'scripts', 'build-dashboard.mjs'))) as {
      buildDashboard: (outDir: string) => Promise<void>;
      webRoot: string;
    };
    if (!existsSync(index) || statSync(index).mtimeMs < newestMtime(webRoot)) await buildDashboard(DASHBOARD_DIR);
    // the first delivery fails (503), the manual retry succeeds
    receiver = await startReceiver({
      handler: (_call, res, i) => {
        if (i === 0) res.writeHead(503).end('busy');
        else res.writeHead(200).end('ok');
      },
    });
    t = await startTestService({ NFSE_WEBHOOKS_ALLOW_INSECURE: 'true' });
    const org = await t.createOrganization('pro', 'Empresa Exemplo');
    const member = await t.request('POST', `/admin/organizations/${org.id}/members`, {
      key: t.adminKey,
      body: { email: EMAIL, password: PASSWORD },
    });
    expect(member.status, member.text).toBe(201);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
    const context = await browser.newContext({
      acceptDownloads: true,
      viewport: { width: 1200, height: 900 },
      locale: 'pt-BR',
    });
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await receiver?.close();
  });

  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

  it('signs in, onboards a project, issues, downloads the PDF and cancels', async () => {
    // sign in (a wrong password first: the refusal is shown on the form)
    await page.goto(`${t.baseUrl}/dashboard`);
    await page.fill('#sign-in [name=email]', EMAIL);
    await page.fill('#sign-in [name=password]', 'errada-123456');
    await page.click('#sign-in button[type=submit]');
    await expect
      .poll(() => page.textContent('#sign-in .form-alert'), { timeout: 15_000 })
      .toContain('DASHBOARD_SIGN_IN_FAILED');
    await page.fill('#sign-in [name=password]', PASSWORD);
    await page.click('#sign-in button[type=submit]');
    await page.waitForSelector('#projects-page');
    const cookies = await page.context().cookies();
    expect(cookies.find((c) => c.name === 'nfse_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });

    // create a project: the API's own validation message shows under the field first
    const form = '#create-project';
    await page.fill(`${form} [name=name]`, 'Empresa Exemplo');
    await page.fill(`${form} [name=cnpj]`, '11222333000182');
    await page.fill(`${form} [name=razaoSocial]`, 'EMPRESA EXEMPLO LTDA');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector(`${form} [name=cnpj][aria-invalid=true] + .field-error`);
    expect(await page.textContent(`${form} .form-alert`)).toContain('INVALID_CNPJ');
    const fields: Record<string, string> = {
      cnpj: PROVIDER_CNPJ,
      inscricaoMunicipal: '12345',
      codigoMunicipio: '2611606',
      email: 'fiscal@exemplo.com.br',
      'endereco.logradouro': 'Rua das Flores',
      'endereco.numero': '100',
      'endereco.bairro': 'Centro',
      'endereco.cidade': 'Recife',
      'endereco.uf': 'PE',
      'endereco.cep': '50030230',
      codigoTributacao: '010101',
      tributacaoIss: '1',
      serieNfse: '1',
      defaultNbs: '115021000',
      defaultIndicadorOperacao: '100301',
      defaultClassificacaoTributaria: '000001',
      defaultCstIbscbs: '000',
    };
    for (const [name, value] of Object.entries(fields)) await page.fill(`${form} [name="${name}"]`, value);
    await page.selectOption(`${form} [name=regimeTributario]`, '1');
    await page.selectOption(`${form} [name=ambiente]`, '2');
    await page.click(`${form} button[type=submit]`);
    await page.waitForSelector('#project-settings #edit-project');
    const projectId = page.url().split('/projects/')[1]!.split('/')[0]!;
    await page.goto(`${t.baseUrl}/dashboard/#/projects`);
    await page.waitForSelector(`#projects-page a[href="#/projects/${projectId}/invoices"]`);
    await shot('projects');

    // upload the A1 certificate: its expiry is shown
    const a1 = createA1Certificate({ cnpj: PROVIDER_CNPJ, name: 'EMPRESA EXEMPLO LTDA', password: 'segredo-123' });
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/certificate`);
    await page.waitForSelector('#upload-certificate');
    await page.setInputFiles('#upload-certificate [name=file]', {
      name: 'empresa.pfx',
      mimeType: 'application/x-pkcs12',
      buffer: Buffer.from(a1.pfx),
    });
    await page.fill('#upload-certificate [name=password]', 'senha-errada');
    await page.click('#upload-certificate button[type=submit]');
    await expect
      .poll(() => page.textContent('#upload-certificate .form-alert'), { timeout: 15_000 })
      .toContain('CERTIFICATE_WRONG_PASSWORD');
    await page.setInputFiles('#upload-certificate [name=file]', {
      name: 'empresa.pfx',
      mimeType: 'application/x-pkcs12',
      buffer: Buffer.from(a1.pfx),
    });
    await page.fill('#upload-certificate [name=password]', a1.password);
    await page.click('#upload-certificate button[type=submit]');
    await expect.poll(() => page.textContent('#certificate-state'), { timeout: 15_000 }).toMatch(/dias restantes/);
    await shot('certificate');

    // create an API key: shown once
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/keys`);
    await page.fill('#create-key [name=name]', 'ERP');
    await page.click('#create-key button[type=submit]');
    const key = await page.textContent('#created-key');
    expect(key).toMatch(/^svc_/);
    // the key works on the API itself
    const lookup = await t.request('GET', '/invoices/00000000-0000-4000-8000-000000000000/status', { key: key! });
    expect(lookup.status).toBe(404);

    // a webhook endpoint for the project's events
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/webhooks`);
    await page.fill('#create-endpoint [name=url]', `${receiver.url}/hooks`);
    await page.click('#create-endpoint button[type=submit]');
    await page.waitForSelector(`#endpoints td:text("${receiver.url}/hooks")`);

    // issue from the dashboard: a refusal first (the API's message under the field), then the note
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/issue`);
    const issue = '#issue-invoice';
    await page.waitForSelector(issue);
    await page.fill(`${issue} [name="tomador.cnpj"]`, TAKER.cnpj);
    await page.fill(`${issue} [name="tomador.nome"]`, TAKER.nome);
    await page.fill(`${issue} [name="servico.descricao"]`, 'Desenvolvimento de software sob encomenda');
    await page.fill(`${issue} [name="valores.total"]`, '1500,50');
    await page.fill(`${issue} [name="valores.aliquotaIss"]`, '2');
    await page.click(`${issue} button[type=submit]`);
    await page.waitForSelector(`${issue} .form-alert[role=alert]`);
    expect(await page.textContent(`${issue} .form-alert`)).toMatch(/VALIDATION_FAILED/);
    const taker: Record<string, string> = {
      'tomador.email': TAKER.email,
      'tomador.endereco.logradouro': TAKER.endereco.logradouro,
      'tomador.endereco.numero': TAKER.endereco.numero,
      'tomador.endereco.bairro': TAKER.endereco.bairro,
      'tomador.endereco.cidade': TAKER.endereco.cidade,
      'tomador.endereco.uf': TAKER.endereco.uf,
      'tomador.endereco.cep': TAKER.endereco.cep,
    };
    for (const [name, value] of Object.entries(taker)) await page.fill(`${issue} [name="${name}"]`, value);
    await page.click(`${issue} button[type=submit]`);
    await page.waitForSelector('#invoice-page');
    await page.waitForSelector('#invoice-page .badge.issued', { timeout: 30_000 });
    const invoiceId = page.url().split('/invoices/')[1]!;
    expect(await page.textContent('#invoice-number')).toMatch(/^\d+$/);
    expect(await page.textContent('#timeline')).toContain('Emitida');
    await shot('invoice-issued');

    // download the PDF
    const [pdf] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#invoice-actions button:has-text("PDF")'),
    ]);
    expect(pdf.suggestedFilename()).toBe(`nfse-${invoiceId}.pdf`);
    const bytes = readFileSync((await pdf.path())!);
    expect(bytes.subarray(0, 5).toString('latin1')).toBe('%PDF-');

    // cancel: the timeline shows the request and the cancellation
    await page.fill('#cancel-invoice [name=motivo]', 'Serviço não prestado');
    await page.click('#cancel-invoice button[type=submit]');
    await page.waitForSelector('#invoice-page .badge.cancelled', { timeout: 30_000 });
    expect(await page.textContent('#timeline')).toContain('Cancelamento solicitado');
    await shot('invoice-timeline');

    // the invoice list filters by status and taker
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/invoices?status=cancelled&taker=Cliente`);
    await page.waitForSelector(`#invoices a[href="#/projects/${projectId}/invoices/${invoiceId}"]`);
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/invoices?status=error`);
    await page.waitForSelector('#project-invoices p.muted');

    // webhook deliveries with their attempts: nfse.issued got a 503 (pending, next attempt scheduled); a manual
    // retry of the delivered nfse.cancelled makes one more attempt with the same delivery id
    const cancelledEvent = () => receiver.callsTo('/hooks').some((c) => c.headers['x-svc-event'] === 'nfse.cancelled');
    await expect.poll(cancelledEvent, { timeout: 20_000 }).toBe(true);
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/webhooks`);
    const issuedDelivery = page.locator('#deliveries details.delivery', { hasText: 'nfse.issued' });
    await issuedDelivery.locator('tr.failed').waitFor();
    expect(await issuedDelivery.getAttribute('class')).toContain('pending');
    expect(await issuedDelivery.textContent()).toContain('HTTP 503');
    const cancelled = () => page.locator('#deliveries details.delivery', { hasText: 'nfse.cancelled' });
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.waitForSelector('#deliveries details.delivery');
          return cancelled().locator('tr.ok').count();
        },
        { timeout: 20_000 },
      )
      .toBe(1);
    await cancelled().locator('button').click();
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.waitForSelector('#deliveries details.delivery');
          return cancelled().locator('tr.ok').count();
        },
        { timeout: 20_000 },
      )
      .toBe(2);
    await shot('webhook-deliveries');

    // the DANFSe preview draws the latest note with a template
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/logo`);
    await page.selectOption('#preview-danfse [name=template]', 'paisagem_logo');
    await page.click('#preview-danfse button[type=submit]');
    const previewLink = page.locator('#danfse-preview a[download="danfse-paisagem_logo.pdf"]');
    await previewLink.waitFor();
    expect(await page.getAttribute('#danfse-preview iframe', 'src')).toMatch(/^blob:/);
    // what the page showed, fetched again with the browser's session cookie
    const drawn = await page.request.get(
      `${t.baseUrl}/dashboard/api/projects/${projectId}/danfse-preview?template=paisagem_logo`,
    );
    expect(drawn.headers()['content-type']).toBe('application/pdf');
    expect((await drawn.body()).subarray(0, 5).toString('latin1')).toBe('%PDF-');

    // a batch sent from the dashboard, followed with its items
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/batches`);
    await page.fill('#issue-batch [name=items]', JSON.stringify([invoiceBody({ referencia: 'lote-1' })]));
    await page.click('#issue-batch button[type=submit]');
    await page.waitForSelector('#batches details.batch a:text("lote-1")');

    // the white-label domain: the CNAME to create and its verification state
    await page.goto(`${t.baseUrl}/dashboard/#/settings`);
    await page.fill('#white-label [name=storageBaseUrl]', 'http://notas.exemplo.com.br');
    await page.click('#white-label button[type=submit]');
    await page.waitForSelector('#white-label [name=storageBaseUrl][aria-invalid=true] + .field-error');
    await page.fill('#white-label [name=storageBaseUrl]', 'https://notas.exemplo.com.br');
    await page.click('#white-label button[type=submit]');
    await page.waitForSelector('#white-label .dns pre');
    expect(await page.textContent('#white-label .dns pre')).toMatch(/^notas\.exemplo\.com\.br\.\s+CNAME\s+\S+\.$/);
    await shot('settings-domain');

    // an organization token with chosen scopes, shown once
    await page.goto(`${t.baseUrl}/dashboard/#/tokens`);
    await page.fill('#create-org-token [name=name]', 'Contabilidade');
    await page.check('#create-org-token [name=scopes][value="projects:read"]');
    await page.click('#create-org-token button[type=submit]');
    expect(await page.textContent('#created-token')).toMatch(/^svc_org_/);

    // usage charts, and the language switch
    await page.goto(`${t.baseUrl}/dashboard/#/projects/${projectId}/usage`);
    await page.waitForSelector('#chart-per-day');
    expect(await page.locator('#chart-per-day rect:not([height="0"])').count()).toBe(1); // today's notes
    await page.selectOption('#language', 'en');
    await page.waitForSelector('text=Invoices per day (14 days)');
    await shot('usage-en');

    // sign out: the session is gone
    await page.click('header button.link');
    await page.waitForSelector('#sign-in');
  });
});
