/**
 * Where a municipal provider's sandbox is mounted on the sandbox server: `/municipal/<slug>/producao|producaorestrita`.
 * Kept apart from `municipal.ts` (which loads every provider's sandbox) so that the service, whose sandboxes run in
 * a process of their own, resolves its engines' sandbox URLs without loading them: the sandbox process reports its
 * mounts (engine key → slug) when it is ready.
 */

/** engine key (`abrasf-v2:megasoft`) → the path segment under /municipal/ (`abrasf-megasoft`) */
export type SandboxMounts = Readonly<Record<string, string>>;

/** The base path of a provider's sandbox for an environment; an engine with no mount gets its key as a slug. */
export function municipalSandboxPathIn(mounts: SandboxMounts, engine: string, ambiente: 1 | 2): string {
  const slug = mounts[engine] ?? engine.replace(/[^a-z0-9]+/g, '-');
  return `/municipal/${slug}/${ambiente === 1 ? 'producao' : 'producaorestrita'}`;
}
