/**
 * Makes dist/pglite-spare/ from the template (`db/embedded-dir.ts` starts it, detached and at the lowest priority,
 * after a first start used the spare or copied the template). Compiled-only: from the sources there is no template.
 */
import { makeSpare } from './embedded-dir.ts';

await makeSpare().catch(() => undefined);
