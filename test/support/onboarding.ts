import { randomUUID } from 'node:crypto';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import { invoices } from '../../src/db/schema.ts';
import type { TestService } from './harness.ts';

export const PROVIDER_CNPJ = '11222333000181';

export interface OnboardedProject {
  orgId: string;
  orgToken: string;
  projectId: string;
  apiKey: string;
  certificatePem: string;
  cnpj: string;
}

/** The onboarding flow of spec 5.8, over HTTP: org → project → certificate → API key. */
export async function onboardProject(
  t: TestService,
  options: {
    plan?: string;
    project?: Record<string, unknown>;
    cnpj?: string;
    certificateEncryption?: 'aes256' | '3des';
    rateLimitPerMinute?: number;
    /** false: the project gets no A1 certificate (issuing is refused with 422) */
    withCertificate?: boolean;
  } = {},
): Promise<OnboardedProject> {
  const cnpj = options.cnpj ?? PROVIDER_CNPJ;
  const org = await t.createOrganization(options.plan ?? 'pro');
  const project = await t.request('POST', '/org/projects', {
    key: org.token,
    body: {
      name: 'Empresa Exemplo',
      cnpj,
      razaoSocial: 'EMPRESA EXEMPLO LTDA',
      inscricaoMunicipal: '12345',
      regimeTributario: '1',
      // Recife: adherent to the national environment, so a regime-1 project issues there; not parametrised in the
      // sandbox ADN (src/sandbox/adn/seed.ts), so no municipal breakdown or parametrised rate applies by default
      codigoMunicipio: '2611606',
      email: 'fiscal@exemplo.com.br',
      telefone: '11999990000',
      endereco: {
        logradouro: 'Rua das Flores',
        numero: '100',
        bairro: 'Centro',
        cidade: 'Recife',
        uf: 'PE',
        cep: '50030230',
      },
      codigoTributacao: '010101',
      tributacaoIss: 1,
      serieNfse: '1',
      ambiente: 2,
      defaultNbs: '115021000',
      defaultIndicadorOperacao: '100301',
      defaultClassificacaoTributaria: '000001',
      defaultCstIbscbs: '000',
      ...options.project,
    },
  });
  if (project.status !== 201) throw new Error(`create project: ${project.status} ${project.text}`);
  const projectId = project.body.id as string;

  const a1 = createA1Certificate({
    cnpj,
    name: 'EMPRESA EXEMPLO LTDA',
    password: 'segredo-123',
    encryption: options.certificateEncryption ?? 'aes256',
  });
  const form = new FormData();
  form.set('password', a1.password);
  form.set('file', new Blob([new Uint8Array(a1.pfx)], { type: 'application/x-pkcs12' }), 'empresa.pfx');
  const cert =
    options.withCertificate === false
      ? { status: 201, text: '' }
      : await t.request('POST', `/org/projects/${projectId}/certificate`, { key: org.token, rawBody: form });
  if (cert.status !== 201) throw new Error(`upload certificate: ${cert.status} ${cert.text}`);

  if (options.rateLimitPerMinute) {
    // the operator raises the organization's key ceiling (plans cap it) so the suite can go fast
    const limits = await t.request('PUT', `/admin/organizations/${org.id}/limits`, {
      key: t.adminKey,
      body: { keyRateLimitCeiling: Math.max(options.rateLimitPerMinute, 60) },
    });
    if (limits.status !== 200) throw new Error(`raise key ceiling: ${limits.status} ${limits.text}`);
  }
  const key = await t.request('POST', `/org/projects/${projectId}/api-keys`, {
    key: org.token,
    body: { name: 'test', ...(options.rateLimitPerMinute ? { rateLimitPerMinute: options.rateLimitPerMinute } : {}) },
  });
  if (key.status !== 201) throw new Error(`create api key: ${key.status} ${key.text}`);
  return { orgId: org.id, orgToken: org.token, projectId, apiKey: key.body.key, certificatePem: a1.certPem, cnpj };
}

/** A taker with everything the national layout may ask of it (a CNPJ taker needs its address, E0235). */
export const TAKER = {
  cnpj: '11444777000161',
  nome: 'Cliente Tomador SA',
  email: 'contas@cliente.com.br',
  endereco: {
    logradouro: 'Avenida Paulista',
    numero: '1000',
    bairro: 'Bela Vista',
    cidade: 'São Paulo',
    uf: 'SP',
    cep: '01310100',
  },
};

/** A minimal valid POST /emitir body. */
export function invoiceBody(overrides: Record<string, unknown> = {}) {
  return {
    tomador: TAKER,
    servico: { descricao: 'Desenvolvimento de software sob encomenda', codigo: '010101' },
    valores: { total: 1500.5, aliquotaIss: 2 },
    ...overrides,
  };
}

/**
 * An invoice row of the project as intake writes it (queued, a valid request), over `values`, without its job: no
 * worker picks it up, so a test drives the job's steps itself. Returns its id.
 */
export async function insertInvoiceRow(
  t: TestService,
  project: OnboardedProject,
  values: Partial<typeof invoices.$inferInsert> = {},
): Promise<string> {
  const id = randomUUID();
  await t.service.ctx.db.insert(invoices).values({
    id,
    projectId: project.projectId,
    orgId: project.orgId,
    status: 'queued',
    engine: 'national',
    request: invoiceBody(),
    warnings: [],
    ambiente: 2,
    ...values,
  });
  return id;
}

/** Polls the status until it leaves queued/processing (or the timeout). */
export async function waitForInvoice(
  t: TestService,
  apiKey: string,
  invoiceId: string,
  timeoutMs = 15_000,
  // biome-ignore lint/suspicious/noExplicitAny: status body
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.request('GET', `/invoices/${invoiceId}/status`, { key: apiKey });
    if (res.status !== 200) throw new Error(`status: ${res.status} ${res.text}`);
    if (!['queued', 'processing'].includes(res.body.status)) return res.body;
    if (Date.now() > deadline) throw new Error(`invoice ${invoiceId} still ${res.body.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
