import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';

/**
 * Stored files are data, never active content: nothing they contain may run a script, load anything, submit a form
 * or be framed. `sandbox` also gives an XML or image opened directly a unique origin; PDFs are left out of it, as
 * the browsers' PDF viewers refuse to run in a sandboxed document.
 */
export function contentSecurityPolicy(contentType: string): string {
  const base =
    "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
  return contentType.startsWith('application/pdf') ? base : `${base}; sandbox`;
}

/**
 * Public document URLs of the local storage driver: unauthenticated, unguessable keys, immutable.
 * (With S3 the bucket or its CDN serves them and this route is not used.)
 */
export const servePublicFile: RouteModule = (app, ctx) => {
  app.get<{ Params: { '*': string } }>('/files/*', { schema: { hide: true } }, async (request, reply) => {
    const key = request.params['*'];
    if (!key || key.includes('..') || key.startsWith('/') || key.includes('\\')) throw new ApiError('NOT_FOUND');
    const file = await ctx.storage.get(key).catch(() => null);
    if (!file) throw new ApiError('NOT_FOUND');
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', contentSecurityPolicy(file.contentType))
      .header('cross-origin-resource-policy', 'cross-origin')
      .type(file.contentType)
      .send(file.body);
  });
};
