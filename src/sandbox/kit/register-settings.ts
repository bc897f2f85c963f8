import type { SandboxAdminRoute } from './server.ts';

/**
 * The operator's register of a sandbox that authenticates by key or user (`PUT /__sandbox/<slug>/settings
 * {"<field>": {"<key>": {…}}}`): an object sets the register, anything else (null, absent) clears it, and the sandbox
 * accepts any non-empty credential again. The answer names the field with the register's size (`count`) or its
 * keys (`names`).
 */
export function registerSettingsRoute<T extends Record<string, unknown>>(options: {
  slug: string;
  field: string;
  set(register: T | null): void;
  answer?: 'count' | 'names';
}): SandboxAdminRoute {
  return {
    method: 'PUT',
    path: `/__sandbox/${options.slug}/settings`,
    handler(req) {
      const given = req.json()?.[options.field];
      const register = given && typeof given === 'object' ? (given as T) : null;
      options.set(register);
      const size =
        options.answer === 'names' ? register && Object.keys(register) : register && Object.keys(register).length;
      return { status: 200, body: { [options.field]: size } };
    },
  };
}
