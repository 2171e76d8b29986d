import { UNTRUSTED_PROXY_WARNING } from '../../dashboard/http/tls-proxy';
import { addUser, DashboardClient, spawnDashboard } from '../support/dashboard';
import { eventually, startHarness, type Harness } from '../support/harness';
import { stop, type Spawned } from '../support/processes';

/**
 * DASHBOARD_SECURE_COOKIES=true, the dashboard behind a TLS-terminating proxy on loopback
 * (TRUST_PROXY): Strict-Transport-Security on every response, and `__Host-` cookies.
 */
let h: Harness;
let dashboard: Spawned & { url: string };
let nextClient = 1;
const HSTS = 'max-age=31536000; includeSubDomains';
/** A browser reaching the dashboard over HTTPS through the proxy, which says so in X-Forwarded-Proto. */
const client = () => new DashboardClient(dashboard.url, `198.51.100.${nextClient++}`, { 'X-Forwarded-Proto': 'https' });
/** The dashboard's origin as the browser sees it (forms are refused from any other). */
const httpsOrigin = () => ({ Origin: dashboard.url.replace(/^http:/, 'https:') });

beforeAll(async () => {
  h = await startHarness();
  await addUser(h.env.db, 'tls-acme', 'owner@tls.test', 'owner');
  dashboard = await spawnDashboard(h.env.processEnv({ TRUST_PROXY: 'loopback', DASHBOARD_SECURE_COOKIES: 'true' }));
});
afterAll(async () => {
  await stop(dashboard);
  await h.close();
});

/** The Set-Cookie line of `name`, which must be there. */
const setCookie = (headers: Headers, name: string) => {
  const line = headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  expect(line).toBeDefined();
  return line!;
};

/** What `__Host-` requires of a cookie, or browsers drop it: Secure, Path=/ and no Domain. */
const expectHostCookie = (line: string) => {
  expect(line).toMatch(/; Secure(;|$)/);
  expect(line).toMatch(/; Path=\/(;|$)/);
  expect(line).not.toMatch(/Domain=/i);
  expect(line).toMatch(/HttpOnly/);
  expect(line).toMatch(/SameSite=Strict/);
};

describe('dashboard with secure cookies', () => {
  it('sends Strict-Transport-Security on every response: pages, assets, redirects, probes, 404s, refusals', async () => {
    const browser = client();
    const responses = [
      await browser.get('/signin'),
      await browser.get('/assets/dashboard.css'),
      await browser.get('/keys/test'),
      await browser.get('/healthz'),
      await browser.get('/no-such-page'),
      await browser.post('/signin', { email: 'owner@tls.test', password: 'x' }, { Origin: 'https://elsewhere.example' }),
    ];
    expect(responses.map((res) => res.status)).toEqual([200, 200, 303, 200, 404, 403]);
    for (const res of responses) expect(res.headers.get('strict-transport-security')).toBe(HSTS);
    // Also over plain http, where browsers ignore it: the header does not depend on the request.
    expect((await fetch(`${dashboard.url}/healthz`)).headers.get('strict-transport-security')).toBe(HSTS);
  });

  it('names the session and device cookies __Host-…, Secure, Path=/ and without Domain, and signs in and out with them', async () => {
    const browser = client();
    const visit = await browser.get('/signin');
    expectHostCookie(setCookie(visit.headers, '__Host-cos_dashboard'));
    expect(visit.headers.getSetCookie().some((c) => c.startsWith('cos_dashboard='))).toBe(false);

    const signedIn = await browser.post('/signin', { email: 'owner@tls.test', password: 'a long enough password' }, httpsOrigin());
    expect(signedIn).toMatchObject({ status: 303, location: '/keys/test' });
    expectHostCookie(setCookie(signedIn.headers, '__Host-cos_dashboard'));
    expectHostCookie(setCookie(signedIn.headers, '__Host-cos_device'));
    expect(browser.prefix).toBe('__Host-');
    expect((await browser.get('/keys/test')).status).toBe(200);

    const out = await browser.post('/signout', {}, httpsOrigin());
    expect(out.location).toBe('/signin');
    // Removed with the attributes it was set with, or a browser keeps the `__Host-` cookie.
    const removal = setCookie(out.headers, '__Host-cos_dashboard');
    expectHostCookie(removal);
    expect(removal).toMatch(/Expires=Thu, 01 Jan 1970/);
    expect(browser.cookie).toBeUndefined();
    expect(await browser.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
  });

  it('logs no warning about TRUST_PROXY when it is set', () => {
    expect(dashboard.output()).not.toContain(UNTRUSTED_PROXY_WARNING);
  });

  it('without TRUST_PROXY: warns once at start, and indeed sends no session cookie, even to a request the proxy calls HTTPS', async () => {
    const env = h.env.processEnv({ DASHBOARD_SECURE_COOKIES: 'true' });
    delete env.TRUST_PROXY;
    const untrusting = await spawnDashboard(env);
    try {
      const lines = () =>
        untrusting
          .output()
          .split('\n')
          .filter((line) => line.includes(UNTRUSTED_PROXY_WARNING));
      await eventually(async () => lines().length > 0);
      expect(lines()).toHaveLength(1);
      expect(JSON.parse(lines()[0]!)).toMatchObject({ level: 40, name: 'cos-dashboard', msg: UNTRUSTED_PROXY_WARNING });
      const res = await new DashboardClient(untrusting.url, '198.51.100.99', { 'X-Forwarded-Proto': 'https' }).get('/signin');
      expect(res.status).toBe(200);
      expect(res.headers.getSetCookie()).toEqual([]);
      expect(res.headers.get('strict-transport-security')).toBe(HSTS);
    } finally {
      await stop(untrusting);
    }
  });
});
