import type { DashboardConfig } from '../../shared/config/config';
import type { Logger } from '../../shared/logger/logger';

export const UNTRUSTED_PROXY_WARNING =
  'DASHBOARD_SECURE_COOKIES=true without TRUST_PROXY: every request looks like plain http to the dashboard, ' +
  'so it never sends its Secure session cookie and nobody can sign in. Behind a TLS-terminating proxy, ' +
  "set TRUST_PROXY to the proxy's addresses (the proxy must send X-Forwarded-Proto: https)";

/**
 * Warns, once at start, of secure cookies without TRUST_PROXY. The dashboard speaks plain http
 * only; TLS ends at a proxy, and only a trusted proxy's X-Forwarded-Proto makes a request count
 * as HTTPS, which express-session requires before it sends a Secure cookie. Not refused: only
 * new sessions fail (a browser still sends the cookie it has), and an exit would end those too.
 * Returns whether it warned.
 */
export function warnOfUntrustedProxy(config: Pick<DashboardConfig, 'DASHBOARD_SECURE_COOKIES' | 'TRUST_PROXY'>, logger: Logger): boolean {
  if (!config.DASHBOARD_SECURE_COOKIES || (config.TRUST_PROXY?.length ?? 0) > 0) return false;
  logger.warn({ DASHBOARD_SECURE_COOKIES: true, TRUST_PROXY: null }, UNTRUSTED_PROXY_WARNING);
  return true;
}
