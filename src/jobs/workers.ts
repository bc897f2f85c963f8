import type { AppContext } from '../context.ts';

/** Registers the handler of every job of the catalogue on this process. */
export async function registerWorkers(_ctx: AppContext): Promise<void> {
  // handlers are added as the engines land
}
