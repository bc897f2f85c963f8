import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';

/**
 * GET /dashboard and its assets: the front-end built by Vite from web/ (scripts/build-dashboard.mjs) into
 * dist/dashboard/. Run from the sources (tests, `npm run dev`) or from dist/ (`npm start`), the same folder.
 */
const codeRoot = fileURLToPath(new URL('../../../../', import.meta.url));
export const DASHBOARD_DIR = existsSync(join(codeRoot, '.build-complete'))
  ? join(codeRoot, 'dashboard')
  : join(codeRoot, 'dist', 'dashboard');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; frame-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
};

export const dashboardServeAppRoute: RouteModule = (app) => {
  const serve = async (path: string) => {
    const relative = normalize(path || 'index.html');
    const file = join(DASHBOARD_DIR, relative);
    const inside = file.startsWith(DASHBOARD_DIR + sep);
    const isAsset = relative.startsWith(`assets${sep}`) || extname(relative) !== '';
    const target = inside && isAsset ? file : join(DASHBOARD_DIR, 'index.html');
    if (!statSync(target, { throwIfNoEntry: false })?.isFile()) {
      if (target.endsWith('index.html')) {
        throw new ApiError('SERVICE_UNAVAILABLE', 'The dashboard front-end is not built: run `npm run build`');
      }
      throw new ApiError('ROUTE_NOT_FOUND', 'No such dashboard file');
    }
    return { body: readFileSync(target), type: TYPES[extname(target)] ?? 'application/octet-stream', target };
  };
  app.get('/dashboard', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/dashboard/', 302));
  app.get<{ Params: { '*': string } }>('/dashboard/*', { schema: { hide: true } }, async (request, reply) => {
    const path = request.params['*'];
    if (path.startsWith('api/')) throw new ApiError('ROUTE_NOT_FOUND');
    const { body, type, target } = await serve(path);
    reply.headers(SECURITY_HEADERS);
    reply.header(
      'cache-control',
      target.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
    );
    return reply.type(type).send(body);
  });
};
