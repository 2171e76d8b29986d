import { setPasswordHash } from '../../shared/dashboard/user.repository';
import { hashPassword } from '../../shared/dashboard/password';
import { listAudit } from '../../shared/dashboard/audit.repository';
import { addUser, DashboardClient, spawnDashboard } from '../support/dashboard';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { stop, type Spawned } from '../support/processes';

let h: Harness;
let dashboard: Spawned & { url: string };
let acme: string;
let apiKey: string;
let nextClient = 1;
/** Each test is its own client address (X-Forwarded-For), so the per-client throttle of one does not reach another. */
const client = (address = `198.51.100.${nextClient++}`) => new DashboardClient(dashboard.url, address);

beforeAll(async () => {
  h = await startHarness();
  acme = await addUser(h.env.db, 'dash-acme', 'owner@acme.test', 'owner');
  apiKey = await h.key('dash-acme');
  dashboard = await spawnDashboard(h.env.processEnv({ TRUST_PROXY: 'loopback' }));
});
afterAll(async () => {
  await stop(dashboard);
  await h.close();
});

const sessionKey = (sid: string) => `${h.env.keys.dashboardSessionPrefix}${sid}`;

describe('dashboard sign-in and sessions', () => {
  it('signs in with a new session id, an HttpOnly SameSite=Strict cookie, and audits the country only', async () => {
    const browser = client('81.2.69.160');
    await browser.get('/signin');
    const before = browser.sessionId();
    // A visitor's session (only the form's CSRF token) is kept an hour, a signed-in one 12 h.
    expect(await h.env.redis.ttl(sessionKey(before!))).toBeLessThanOrEqual(3600);
    const res = await browser.signIn('Owner@Acme.test');
    expect(res).toMatchObject({ status: 303, location: '/keys/test' });
    expect(browser.sessionId()).toBeDefined();
    expect(browser.sessionId()).not.toBe(before);
    expect(await h.env.redis.exists(sessionKey(before!))).toBe(0);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('cos_dashboard='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toMatch(/Secure/);
    expect((await browser.get('/keys/test')).status).toBe(200);
    expect(await h.env.redis.ttl(sessionKey(browser.sessionId()!))).toBeGreaterThan(12 * 3600 - 60);
    const [entry] = await listAudit(h.env.db, acme, 1);
    expect(entry).toMatchObject({ action: 'session.sign-in', actor: 'owner@acme.test', country: 'GB' });
    const stored = JSON.stringify(await h.env.db.selectFrom('dashboard_audit').selectAll().execute());
    expect(stored).not.toContain('81.2.69.160');
  });

  it('answers a wrong email and a wrong password the same, then throttles the email after 5 failures with 429', async () => {
    const wrongEmail = await client().signIn('nobody@acme.test', 'a long enough password');
    const wrongPassword = await client().signIn('owner@acme.test', 'not the password');
    expect(wrongEmail.status).toBe(401);
    expect(wrongPassword.status).toBe(401);
    const message = (body: string) => /role="alert">([^<]*)</.exec(body)?.[1];
    expect(message(wrongEmail.body)).toBe('The email or password is not correct');
    expect(message(wrongPassword.body)).toBe(message(wrongEmail.body));
    for (let i = 0; i < 4; i++) expect((await client().signIn('owner@acme.test', 'still wrong')).status).toBe(401);
    // The right password from yet another client: the email is locked for now.
    const locked = await client().signIn('owner@acme.test');
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
    const asJson = client();
    await asJson.get('/signin');
    const envelope = await asJson.post('/signin', { email: 'owner@acme.test', password: 'x' }, { Accept: 'application/json' });
    expect(envelope.status).toBe(429);
    expect(JSON.parse(envelope.body)).toEqual({
      error: { code: 'RATE_LIMIT_EXCEEDED', statusCode: 429, message: expect.stringContaining('Too many failed sign-ins') },
    });
    await h.env.redis.del(...(await h.env.redis.keys(`${h.env.prefix}:v1:{signin}:failures:email:*`)));
  });

  it('throttles a client address after 5 failures, whatever the email', async () => {
    await addUser(h.env.db, 'dash-acme', 'second@acme.test', 'viewer');
    const browser = client();
    for (let i = 0; i < 5; i++) expect((await browser.signIn(`guess${i}@acme.test`, 'wrong')).status).toBe(401);
    expect((await browser.signIn('second@acme.test')).status).toBe(429);
    expect((await client().signIn('second@acme.test')).status).toBe(303);
  });

  it('never takes an API key as a credential: not as a login, not as a bearer token', async () => {
    expect((await client().signIn(apiKey, apiKey)).status).toBe(401);
    expect((await client().signIn('owner@acme.test', apiKey)).status).toBe(401);
    const anonymous = client();
    expect(await anonymous.get('/keys/test', bearer(apiKey))).toMatchObject({ status: 303, location: '/signin' });
    await anonymous.get('/signin');
    expect((await anonymous.post('/keys/test', { name: 'x' }, bearer(apiKey))).status).toBe(401);
  });

  it('never lets a dashboard session call /v1: the API refuses the cookie and the dashboard has no /v1', async () => {
    const browser = client();
    await browser.signIn('owner@acme.test');
    const cookie = { Cookie: `cos_dashboard=${browser.cookie}` };
    const api = await h.http().post('/v1/context').set(cookie).send({ userId: 'u', task: 't', complexity: 'low' });
    expect(api.status).toBe(401);
    expect(api.body.error.code).toBe('UNAUTHORIZED');
    expect((await browser.get('/v1/profile/x')).status).toBe(404);
  });

  it('ends the session at sign-out: the cookie then opens nothing and changes nothing', async () => {
    const browser = client();
    await browser.signIn('owner@acme.test');
    const sid = browser.sessionId()!;
    const cookie = browser.cookie;
    expect((await browser.post('/signout')).location).toBe('/signin');
    expect(await h.env.redis.exists(sessionKey(sid))).toBe(0);
    browser.cookie = cookie; // a copy of the cookie kept from before
    expect(await browser.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    const keysBefore = await h.env.db.selectFrom('api_keys').select('id').execute();
    const res = await browser.post('/keys/test', { name: 'after logout' }, { Accept: 'application/json' });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body).error.code).toBe('UNAUTHORIZED');
    expect(await h.env.db.selectFrom('api_keys').select('id').execute()).toHaveLength(keysBefore.length);
    expect((await listAudit(h.env.db, acme, 5)).map((e) => e.action)).toContain('session.sign-out');
  });

  it('ends the sessions of a user whose password was reset', async () => {
    await addUser(h.env.db, 'dash-acme', 'reset@acme.test', 'owner');
    const browser = client();
    await browser.signIn('reset@acme.test');
    expect((await browser.get('/keys/test')).status).toBe(200);
    await setPasswordHash(h.env.db, 'reset@acme.test', await hashPassword('another long password'));
    expect(await browser.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
  });

  it('expires an idle session after DASHBOARD_SESSION_IDLE, each request starting the period again', async () => {
    const short = await spawnDashboard(h.env.processEnv({ TRUST_PROXY: 'loopback', DASHBOARD_SESSION_IDLE: '3s' }));
    try {
      const browser = new DashboardClient(short.url, '198.51.100.200');
      await browser.signIn('owner@acme.test');
      const key = sessionKey(browser.sessionId()!);
      expect(await h.env.redis.pttl(key)).toBeLessThanOrEqual(3000);
      await h.env.redis.pexpire(key, 1000); // as if most of the idle period had passed
      expect((await browser.get('/keys/test')).status).toBe(200);
      expect(await h.env.redis.pttl(key)).toBeGreaterThan(1000);
      await eventually(async () => (await h.env.redis.exists(key)) === 0, 10_000);
      expect(await browser.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    } finally {
      await stop(short);
    }
  });
});
