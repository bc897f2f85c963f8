import type { RouteModule } from '../../route.ts';

export const openapiDocument: RouteModule = (app) => {
  app.get('/openapi.json', { schema: { hide: true, security: [] } }, async () => app.swagger());
};
