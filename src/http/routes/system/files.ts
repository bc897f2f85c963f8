import { ApiError } from '../../errors.ts';
import type { RouteModule } from '../../route.ts';

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
    return reply.header('cache-control', 'public, max-age=31536000, immutable').type(file.contentType).send(file.body);
  });
};
