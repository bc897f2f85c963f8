/**
 * Path patterns of the sandbox kit.
 *
 * A service is mounted at a prefix such as `/:ambiente(producao|producaorestrita)/SefinNacional`: literal
 * segments, `:name` (any one segment) and `:name(a|b)` (one of the listed literals). The prefix is matched strictly
 * against the raw path (`/prefix` or `/prefix/…`). Routes below it (`/nfse/:chave/eventos`) are matched segment by
 * segment against the rest of the path with empty segments ignored (`/nfse/` is `/nfse`); their parameters are
 * percent-decoded (a malformed escape throws `URIError`, which the server answers as an internal error).
 */

export interface CompiledMount {
  pattern: string;
  /** `{producao|producaorestrita}/SefinNacional`-style text for messages. */
  display: string;
  match(pathname: string): { params: Record<string, string>; subPath: string } | null;
}

const PARAM = /^:([A-Za-z_][A-Za-z0-9_]*)(?:\(([^()]+)\))?$/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function patternSegments(pattern: string): string[] {
  if (!pattern.startsWith('/')) throw new Error(`sandbox path pattern must start with '/': ${pattern}`);
  return pattern.split('/').filter(Boolean);
}

export function compileMount(pattern: string): CompiledMount {
  const names: string[] = [];
  const display: string[] = [];
  const source = patternSegments(pattern).map((segment) => {
    const param = PARAM.exec(segment);
    if (!param) {
      display.push(segment);
      return escapeRegExp(segment);
    }
    names.push(param[1]);
    if (!param[2]) {
      display.push(`{${param[1]}}`);
      return '([^/]+)';
    }
    const options = param[2].split('|');
    display.push(`{${options.join('|')}}`);
    return `(${options.map(escapeRegExp).join('|')})`;
  });
  const regex = new RegExp(`^/${source.join('/')}(/.*)?$`);
  return {
    pattern,
    display: `/${display.join('/')}`,
    match(pathname) {
      const found = regex.exec(pathname);
      if (!found) return null;
      const params: Record<string, string> = {};
      names.forEach((name, index) => {
        params[name] = found[index + 1];
      });
      return { params, subPath: found[names.length + 1] ?? '/' };
    },
  };
}

export interface CompiledRoute {
  /** Parameters of a matching path (decoded), or null. */
  match(segments: string[]): Record<string, string> | null;
}

export function compileRoute(pattern: string): CompiledRoute {
  const parts = patternSegments(pattern).map((segment) => {
    const param = PARAM.exec(segment);
    if (!param) return { literal: segment };
    return { name: param[1], options: param[2] ? new Set(param[2].split('|')) : null };
  });
  return {
    match(segments) {
      if (segments.length !== parts.length) return null;
      const params: Record<string, string> = {};
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i];
        const segment = segments[i];
        if ('literal' in part) {
          if (part.literal !== segment) return null;
        } else {
          if (part.options && !part.options.has(segment)) return null;
          params[part.name] = segment;
        }
      }
      return params;
    },
  };
}

/** The segments of a path below a mount, empty ones dropped, each percent-decoded (throws `URIError`). */
export function decodedSegments(subPath: string): string[] {
  return subPath.split('/').filter(Boolean).map(decodeURIComponent);
}
