import { withNamedSchemas } from '../../openapi-components.ts';
import type { RouteModule } from '../../route.ts';

export const openapiDocument: RouteModule = (app) => {
  // built once: the routes, hence the document, do not change after start-up
  let document: Record<string, unknown> | undefined;
  app.get('/openapi.json', { schema: { hide: true, security: [] } }, async () => {
    document ??= withNamedSchemas(app.swagger() as unknown as Record<string, unknown>);
    return document;
  });
};
