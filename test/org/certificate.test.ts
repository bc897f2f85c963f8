import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createA1Certificate } from '../../src/certificates/generate.ts';
import { readPkcs12 } from '../../src/certificates/pkcs12.ts';
import { openSecret } from '../../src/certificates/vault.ts';
import { certificates } from '../../src/db/schema.ts';
import { startTestService, type TestService } from '../support/harness.ts';
import { exportPkcs12WithOpenssl } from '../support/openssl-pkcs12.ts';
import { expectProblem, makeCnpj, projectBody, tinyPng } from '../support/route-checks.ts';
import { hasTool } from '../support/tools.ts';

const DAY = 24 * 60 * 60 * 1000;
let t: TestService;
let token: string;

beforeAll(async () => {
  t = await startTestService({ NFSE_ORG_RATE_LIMIT: '100000' });
  token = (await t.createOrganization('pro')).token;
});
afterAll(async () => {
  await t?.close();
});

/** A head office CNPJ (…/0001-…) and a branch (…/0002-…) of the same company root. */
function companyCnpjs(seed: number) {
  const head = makeCnpj(seed);
  const root = head.slice(0, 8);
  const branchBase = `${root}0002`;
  const digit = (digits: string, weights: number[]) => {
    const rest = [...digits].reduce((acc, d, i) => acc + Number(d) * weights[i]!, 0) % 11;
    return rest < 2 ? 0 : 11 - rest;
  };
  const d1 = digit(branchBase, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  const d2 = digit(branchBase + d1, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
  return { head, branch: `${branchBase}${d1}${d2}` };
}

async function newProject(cnpj: string) {
  const res = await t.request('POST', '/org/projects', { key: token, body: projectBody({ cnpj }) });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

function upload(
  projectId: string,
  parts: { file?: Buffer; password?: string; fileName?: string },
  key: string = token,
) {
  const form = new FormData();
  if (parts.password !== undefined) form.set('password', parts.password);
  if (parts.file) {
    form.set(
      'file',
      new Blob([new Uint8Array(parts.file)], { type: 'application/x-pkcs12' }),
      parts.fileName ?? 'a1.pfx',
    );
  }
  return t.request('POST', `/org/projects/${projectId}/certificate`, { key, rawBody: form });
}

let seed = 4242;
function freshCompany() {
  seed += 1013;
  return companyCnpjs(seed);
}

describe('POST /org/projects/{id}/certificate', () => {
  it('accepts a modern (AES-256) PKCS#12 and answers the 2.4 fields; never the file or password', async () => {
    const { head } = freshCompany();
    const id = await newProject(head);
    const a1 = createA1Certificate({ cnpj: head, name: 'EMPRESA MODERNA LTDA', password: 'S3nh@-moderna' });
    const res = await upload(id, { file: a1.pfx, password: a1.password, fileName: 'empresa.pfx' });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      ['id', 'fileName', 'subjectCN', 'validFrom', 'validUntil', 'daysUntilExpiration', 'active'].sort(),
    );
    expect(res.body).toMatchObject({
      fileName: 'empresa.pfx',
      subjectCN: `EMPRESA MODERNA LTDA:${head}`,
      active: true,
    });
    expect(res.body.daysUntilExpiration).toBeGreaterThanOrEqual(363);
    expect(res.body.daysUntilExpiration).toBeLessThanOrEqual(364);
    expect(new Date(res.body.validUntil).getTime() - new Date(res.body.validFrom).getTime()).toBe(365 * DAY);
    expect(res.text).not.toContain('S3nh@-moderna');

    // sealed at rest: neither the file nor the password in clear, both recoverable with the master key
    const [row] = await t.service.ctx.db.select().from(certificates).where(eq(certificates.id, res.body.id));
    const master = t.service.ctx.config.masterKey;
    expect(row!.pfxSealed).not.toContain(a1.pfx.toString('base64').slice(0, 40));
    expect(JSON.stringify(row)).not.toContain('S3nh@-moderna');
    expect(openSecret(Buffer.from(row!.pfxSealed, 'base64'), master).equals(a1.pfx)).toBe(true);
    expect(openSecret(Buffer.from(row!.passwordSealed, 'base64'), master).toString()).toBe('S3nh@-moderna');
    expect(row!.cnpj).toBe(head);

    const view = await t.request('GET', `/org/projects/${id}`, { key: token });
    expect(view.text).not.toContain('S3nh@-moderna');
    expect(view.text).not.toContain(row!.pfxSealed.slice(0, 20));
    const list = await t.request('GET', '/org/projects?limit=100', { key: token });
    expect(list.body.data.find((p: { id: string }) => p.id === id).hasCertificate).toBe(true);
  });

  it('accepts the 3DES encryption of older tools', async () => {
    const { head } = freshCompany();
    const id = await newProject(head);
    const a1 = createA1Certificate({ cnpj: head, name: 'EMPRESA 3DES', password: 'x', encryption: '3des' });
    const res = await upload(id, { file: a1.pfx, password: a1.password });
    expect(res.status, res.text).toBe(201);
  });

  it.skipIf(!hasTool('openssl'))(
    'accepts the legacy RC2-40/3DES files that OpenSSL 3 refuses by default, and OpenSSL 3 defaults',
    async () => {
      for (const legacy of [true, false]) {
        const { head } = freshCompany();
        const id = await newProject(head);
        const a1 = createA1Certificate({ cnpj: head, name: 'EMPRESA LEGADA', password: 'p' });
        const pfx = exportPkcs12WithOpenssl({ keyPem: a1.keyPem, certPem: a1.certPem, password: 'legado', legacy });
        const res = await upload(id, { file: pfx, password: 'legado', fileName: 'legado.p12' });
        expect(res.status, `legacy=${legacy}: ${res.text}`).toBe(201);
        expect(res.body.subjectCN).toBe(`EMPRESA LEGADA:${head}`);
      }
    },
  );

  it("accepts the head office's certificate on a branch (same CNPJ root) and a CN-only CNPJ", async () => {
    const { head, branch } = freshCompany();
    const id = await newProject(branch);
    const a1 = createA1Certificate({ cnpj: head, name: 'MATRIZ', password: 'p', otherName: false });
    const res = await upload(id, { file: a1.pfx, password: 'p' });
    expect(res.status, res.text).toBe(201);
  });

  it('refuses a certificate of another company or without a CNPJ', async () => {
    const { head } = freshCompany();
    const other = freshCompany().head;
    const id = await newProject(head);
    const foreign = createA1Certificate({ cnpj: other, name: 'OUTRA', password: 'p' });
    const res = await upload(id, { file: foreign.pfx, password: 'p' });
    expectProblem(res, 400, 'CERTIFICATE_CNPJ_MISMATCH');
    expect(res.body.detail).toContain(other.slice(0, 8));
    const ecpf = createA1Certificate({ cpf: '52998224725', name: 'PESSOA FISICA', password: 'p' });
    expectProblem(await upload(id, { file: ecpf.pfx, password: 'p' }), 400, 'CERTIFICATE_CNPJ_MISMATCH');
  });

  it('answers distinct 400 codes for a non-PKCS#12 file, a wrong password, an expired or future certificate', async () => {
    const { head } = freshCompany();
    const id = await newProject(head);
    const now = Date.now();
    const a1 = createA1Certificate({ cnpj: head, name: 'E', password: 'certa' });
    const wrong = await upload(id, { file: a1.pfx, password: 'errada' });
    expectProblem(wrong, 400, 'CERTIFICATE_WRONG_PASSWORD');
    expect(wrong.body.errors[0].field).toBe('password');
    expectProblem(await upload(id, { file: tinyPng(), password: 'x' }), 400, 'CERTIFICATE_NOT_PKCS12');
    expectProblem(
      await upload(id, { file: Buffer.from('-----BEGIN CERTIFICATE-----\nAAAA\n'), password: 'x' }),
      400,
      'CERTIFICATE_NOT_PKCS12',
    );
    const expired = createA1Certificate({
      cnpj: head,
      name: 'E',
      password: 'p',
      notBefore: new Date(now - 400 * DAY),
      notAfter: new Date(now - DAY),
    });
    expectProblem(await upload(id, { file: expired.pfx, password: 'p' }), 400, 'CERTIFICATE_EXPIRED');
    const future = createA1Certificate({
      cnpj: head,
      name: 'E',
      password: 'p',
      notBefore: new Date(now + 10 * DAY),
      notAfter: new Date(now + 400 * DAY),
    });
    expectProblem(await upload(id, { file: future.pfx, password: 'p' }), 400, 'CERTIFICATE_NOT_YET_VALID');
    const missingFile = await upload(id, { password: 'p' });
    expectProblem(missingFile, 400, 'CERTIFICATE_MISSING_FILE');
    expect(missingFile.body.errors).toEqual([{ field: 'file', message: 'is required' }]);
    const missingPassword = await upload(id, { file: a1.pfx });
    expectProblem(missingPassword, 400, 'CERTIFICATE_MISSING_PASSWORD');
    expect(missingPassword.body.errors).toEqual([{ field: 'password', message: 'is required' }]);
    expectProblem(await upload(id, { file: Buffer.alloc(0), password: 'p' }), 400, 'CERTIFICATE_MISSING_FILE');

    // nothing was stored by the refusals
    const rows = await t.service.ctx.db.select().from(certificates).where(eq(certificates.projectId, id));
    expect(rows).toHaveLength(0);
  });

  it('answers 413 above 50 KB (50 KB itself is read) and 415 for a non-multipart body', async () => {
    const { head } = freshCompany();
    const id = await newProject(head);
    const big = await upload(id, { file: Buffer.alloc(50 * 1024 + 1, 0x30), password: 'p' });
    expectProblem(big, 413, 'PAYLOAD_TOO_LARGE');
    const huge = await upload(id, { file: Buffer.alloc(2 * 1024 * 1024, 0x30), password: 'p' });
    expectProblem(huge, 413, 'PAYLOAD_TOO_LARGE');
    expectProblem(
      await upload(id, { file: Buffer.alloc(50 * 1024, 0x30), password: 'p' }),
      400,
      'CERTIFICATE_NOT_PKCS12',
    );
    const json = await t.request('POST', `/org/projects/${id}/certificate`, {
      key: token,
      body: { file: 'AAAA', password: 'p' },
    });
    expectProblem(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
    // the service still answers
    expect((await t.request('GET', '/health')).status).toBe(200);
  });

  it('replaces the certificate atomically: one active row, the previous kept inactive', async () => {
    const { head } = freshCompany();
    const id = await newProject(head);
    const first = createA1Certificate({ cnpj: head, name: 'PRIMEIRO', password: 'p1' });
    const second = createA1Certificate({ cnpj: head, name: 'SEGUNDO', password: 'p2' });
    const r1 = await upload(id, { file: first.pfx, password: 'p1' });
    const r2 = await upload(id, { file: second.pfx, password: 'p2' });
    expect([r1.status, r2.status]).toEqual([201, 201]);
    const db = t.service.ctx.db;
    const rows = await db.select().from(certificates).where(eq(certificates.projectId, id));
    expect(rows).toHaveLength(2);
    const active = rows.filter((r) => r.active);
    expect(active.map((r) => r.id)).toEqual([r2.body.id]);
    expect(active[0]!.subjectCn).toBe(`SEGUNDO:${head}`);

    // a failed upload leaves the active certificate in place
    await upload(id, { file: first.pfx, password: 'wrong' });
    const stillActive = await db
      .select()
      .from(certificates)
      .where(and(eq(certificates.projectId, id), eq(certificates.active, true)));
    expect(stillActive.map((r) => r.id)).toEqual([r2.body.id]);

    // concurrent uploads: all succeed, exactly one stays active, and it opens with its own password
    const results = await Promise.all(
      [1, 2, 3, 4].map((n) => {
        const a1 = createA1Certificate({ cnpj: head, name: `PARALELO ${n}`, password: `p${n}` });
        return upload(id, { file: a1.pfx, password: `p${n}` });
      }),
    );
    for (const r of results) expect(r.status, r.text).toBe(201);
    const finalActive = await db
      .select()
      .from(certificates)
      .where(and(eq(certificates.projectId, id), eq(certificates.active, true)));
    expect(finalActive).toHaveLength(1);
    const master = t.service.ctx.config.masterKey;
    const pfx = openSecret(Buffer.from(finalActive[0]!.pfxSealed, 'base64'), master);
    const password = openSecret(Buffer.from(finalActive[0]!.passwordSealed, 'base64'), master).toString();
    const opened = readPkcs12(pfx, password);
    expect(opened.ok).toBe(true);
    if (opened.ok) expect(opened.value.subjectCN).toBe(finalActive[0]!.subjectCn);
  });

  it('answers 404 for a deleted project', async () => {
    const { head } = freshCompany();
    const id = await newProject(head);
    await t.request('DELETE', `/org/projects/${id}`, { key: token });
    const a1 = createA1Certificate({ cnpj: head, name: 'E', password: 'p' });
    expectProblem(await upload(id, { file: a1.pfx, password: 'p' }), 404, 'PROJECT_NOT_FOUND');
  });
});
