import { UNTRUSTED_PROXY_WARNING, warnOfUntrustedProxy } from '../../dashboard/http/tls-proxy';
import { loadDashboardConfig } from '../../shared/config/config';
import { createLogger } from '../../shared/logger/logger';
import { capture } from '../support/cli';

const BASE = { DATABASE_URL: 'postgres://cos:cos@localhost:5432/cos', REDIS_URL: 'redis://localhost:6379', NODE_ENV: 'test' };

/** What the dashboard logs at start for these variables, as parsed JSON lines. */
function startWarnings(env: Record<string, string>): { warned: boolean; lines: Record<string, unknown>[] } {
  const log = capture();
  const warned = warnOfUntrustedProxy(loadDashboardConfig({ ...BASE, ...env }), createLogger('info', 'cos-dashboard', log.stream));
  const lines = log
    .text()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { warned, lines };
}

describe('the warning of secure cookies without TRUST_PROXY', () => {
  it('is logged once, at warn level, saying what happens and what to set', () => {
    const { warned, lines } = startWarnings({ DASHBOARD_SECURE_COOKIES: 'true' });
    expect(warned).toBe(true);
    expect(lines).toEqual([expect.objectContaining({ level: 40, name: 'cos-dashboard', msg: UNTRUSTED_PROXY_WARNING })]);
    expect(UNTRUSTED_PROXY_WARNING).toContain('nobody can sign in');
    expect(UNTRUSTED_PROXY_WARNING).toContain('set TRUST_PROXY');
    expect(UNTRUSTED_PROXY_WARNING).toContain('X-Forwarded-Proto: https');
  });

  it('is logged too when TRUST_PROXY names no proxy (only commas)', () => {
    expect(startWarnings({ DASHBOARD_SECURE_COOKIES: 'true', TRUST_PROXY: ',' }).lines).toHaveLength(1);
  });

  it.each([
    ['secure cookies with TRUST_PROXY', { DASHBOARD_SECURE_COOKIES: 'true', TRUST_PROXY: '10.0.0.5' }],
    ['plain cookies without TRUST_PROXY', {}],
    ['plain cookies with TRUST_PROXY', { DASHBOARD_SECURE_COOKIES: 'false', TRUST_PROXY: 'loopback' }],
  ])('is not logged with %s', (_case, env) => {
    expect(startWarnings(env)).toEqual({ warned: false, lines: [] });
  });
});
