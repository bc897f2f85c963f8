import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/harness.ts';
import { pngOfSize, tinyJpeg, WEBP_LOSSLESS, WEBP_LOSSY } from '../support/images.ts';
import { expectProblem, projectBody, tinyPng } from '../support/route-checks.ts';

let t: TestService;
let token: string;

beforeAll(async () => {
  t = await startTestService({ NFSE_ORG_RATE_LIMIT: '100000' });
  token = (await t.createOrganization('pro')).token;
});
afterAll(async () => {
  await t?.close();
});

async function newProject() {
  const res = await t.request('POST', '/org/projects', { key: token, body: projectBody() });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

function upload(projectId: string, bytes: Buffer | null, fileName = 'logo.png', type = 'image/png') {
  const form = new FormData();
  if (bytes) form.set('file', new Blob([new Uint8Array(bytes)], { type }), fileName);
  else form.set('other', 'x');
  return t.request('POST', `/org/projects/${projectId}/logo`, { key: token, rawBody: form });
}

const JPEG = tinyJpeg();
const WEBP = WEBP_LOSSY;
const GIF = Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1');

describe('POST /org/projects/{id}/logo', () => {
  it('stores a PNG, JPEG or WebP recognised by content and answers {ok, key}', async () => {
    const id = await newProject();
    for (const [bytes, ext, mime] of [
      [tinyPng(), 'png', 'image/png'],
      [JPEG, 'jpg', 'image/jpeg'],
      [WEBP, 'webp', 'image/webp'],
    ] as const) {
      // the declared name and type are deliberately wrong: only the content counts
      const res = await upload(id, bytes, 'whatever.gif', 'image/gif');
      expect(res.status, res.text).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['height', 'key', 'ok', 'width']);
      expect([res.body.width, res.body.height]).toEqual([1, 1]);
      expect(res.body.ok).toBe(true);
      expect(res.body.key).toMatch(new RegExp(`^p/${id}/[0-9a-f]{32}/logo\\.${ext}$`));
      const stored = await t.service.ctx.storage.get(res.body.key);
      expect(stored!.body.equals(bytes)).toBe(true);
      expect(stored!.contentType).toBe(mime);
      const row = await t.service.ctx.db.query.projects.findFirst({ where: (p, { eq }) => eq(p.id, id) });
      expect(row!.logoKey).toBe(res.body.key);
    }
  });

  it('replaces the previous logo (the old file is removed)', async () => {
    const id = await newProject();
    const first = await upload(id, tinyPng());
    const second = await upload(id, JPEG);
    expect(second.body.key).not.toBe(first.body.key);
    expect(await t.service.ctx.storage.get(first.body.key)).toBeNull();
    expect(await t.service.ctx.storage.get(second.body.key)).not.toBeNull();
  });

  it('refuses other content (400), a missing file (400) and files above 500 KB (413)', async () => {
    const id = await newProject();
    expectProblem(await upload(id, GIF, 'logo.png', 'image/png'), 400, 'LOGO_UNSUPPORTED_FORMAT');
    expectProblem(
      await upload(id, Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), 'l.png'),
      400,
      'LOGO_UNSUPPORTED_FORMAT',
    );
    expectProblem(await upload(id, Buffer.from([0x89, 0x50, 0x4e, 0x47])), 400, 'LOGO_UNSUPPORTED_FORMAT');
    expectProblem(await upload(id, null), 400, 'LOGO_MISSING_FILE');
    expectProblem(await upload(id, pngOfSize(500 * 1024 + 1)), 413, 'PAYLOAD_TOO_LARGE');
    expect((await upload(id, pngOfSize(500 * 1024))).status).toBe(201);
    const json = await t.request('POST', `/org/projects/${id}/logo`, { key: token, body: { file: 'x' } });
    expectProblem(json, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

describe('logos are decoded, not only sniffed (400 LOGO_INVALID_IMAGE)', () => {
  it('refuses truncated files, polyglots and inconsistent headers, naming the problem', async () => {
    const id = await newProject();
    const cases: [string, Buffer, RegExp][] = [
      ['truncated PNG', tinyPng().subarray(0, 40), /truncated/],
      [
        'PNG + HTML',
        Buffer.concat([tinyPng(), Buffer.from('<html><script>alert(1)</script></html>')]),
        /after its end/,
      ],
      ['PNG padded with zeros', Buffer.concat([tinyPng(), Buffer.alloc(1000)]), /after its end/],
      ['truncated JPEG', tinyJpeg().subarray(0, 100), /truncated|no marker/],
      ['JPEG + ZIP', Buffer.concat([tinyJpeg(), Buffer.from('PK\u0003\u0004', 'latin1')]), /after its end/],
      ['truncated WebP', WEBP_LOSSLESS.subarray(0, 30), /truncated/],
      ['JPEG signature only', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46]), /truncated/],
    ];
    for (const [what, bytes, reason] of cases) {
      const res = await upload(id, bytes);
      expectProblem(res, 400, 'LOGO_INVALID_IMAGE');
      expect(res.body.errors[0].field, what).toBe('file');
      expect(res.body.errors[0].message, what).toMatch(reason);
    }
    const row = await t.service.ctx.db.query.projects.findFirst({ where: (p, { eq }) => eq(p.id, id) });
    expect(row!.logoKey).toBeNull();
  });
});

describe('GET /files/* (public documents of the local storage)', () => {
  it('sends nosniff and a strict Content-Security-Policy', async () => {
    const id = await newProject();
    const up = await upload(id, tinyPng());
    const res = await fetch(`${t.baseUrl}/files/${up.body.key}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain('sandbox');
    expect(csp).not.toMatch(/script-src|unsafe-eval/);
    await t.service.ctx.storage.put(`p/${id}/x/doc.pdf`, Buffer.from('%PDF-1.4\n'), 'application/pdf');
    const pdf = await fetch(`${t.baseUrl}/files/p/${id}/x/doc.pdf`);
    expect(pdf.headers.get('x-content-type-options')).toBe('nosniff');
    expect(pdf.headers.get('content-security-policy')).toContain("default-src 'none'");
  });
});

describe('DELETE /org/projects/{id}/logo', () => {
  it('removes the logo and resets danfeTemplate to padrao', async () => {
    const id = await newProject();
    const up = await upload(id, tinyPng());
    const patch = await t.request('PATCH', `/org/projects/${id}`, {
      key: token,
      body: { danfeTemplate: 'paisagem_logo' },
    });
    expect(patch.status).toBe(200);
    const del = await t.request('DELETE', `/org/projects/${id}/logo`, { key: token });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ ok: true });
    const view = await t.request('GET', `/org/projects/${id}`, { key: token });
    expect(view.body.danfeTemplate).toBe('padrao');
    expect(await t.service.ctx.storage.get(up.body.key)).toBeNull();
    const row = await t.service.ctx.db.query.projects.findFirst({ where: (p, { eq }) => eq(p.id, id) });
    expect(row!.logoKey).toBeNull();
    // deleting again is harmless
    expect((await t.request('DELETE', `/org/projects/${id}/logo`, { key: token })).body).toEqual({ ok: true });
  });

  it('answers 404 for a deleted project and keeps its logo file', async () => {
    const id = await newProject();
    const up = await upload(id, tinyPng());
    await t.request('DELETE', `/org/projects/${id}`, { key: token });
    expectProblem(await t.request('DELETE', `/org/projects/${id}/logo`, { key: token }), 404, 'PROJECT_NOT_FOUND');
    expectProblem(await upload(id, tinyPng()), 404, 'PROJECT_NOT_FOUND');
    expect(await t.service.ctx.storage.get(up.body.key)).not.toBeNull();
  });
});
