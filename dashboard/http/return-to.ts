/** Where a sign-in lands when no page was asked for. */
export const DEFAULT_LANDING = '/keys/test';

const BASE = 'http://dashboard.invalid';

/**
 * The page to return to after signing in, when `value` is a path of this dashboard; null for
 * anything else. Browsers read `//host`, `/\host` and `\\host` as other sites, and drop tabs
 * and newlines inside a URL, so only a plain path is kept: one slash, no backslash, no control
 * character, and still on this origin once resolved. The resolved path is what the browser is
 * sent to, so it is checked again: dot segments can resolve to `//host` (`/.//host`,
 * `/a/..//host`, `/%2e//host`).
 */
export function safeReturnPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2000) return null;
  if (!value.startsWith('/') || value.startsWith('//')) return null;
  // eslint-disable-next-line no-control-regex
  if (/[\\\u0000-\u001f\u007f]/.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE || url.pathname.startsWith('//')) return null;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // Back to the sign-in form would be a loop.
  if (url.pathname === '/signin' || url.pathname === '/signout') return null;
  return path;
}

/** The sign-in page's address that returns to `path` afterwards (the plain one for the default landing page). */
export function signInFor(path: string): string {
  const next = safeReturnPath(path);
  return next && next !== DEFAULT_LANDING && next !== '/' ? `/signin?next=${encodeURIComponent(next)}` : '/signin';
}
