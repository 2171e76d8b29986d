import { readdirSync, readFileSync } from 'node:fs';
import { setPasswordHash } from '../../shared/dashboard-users/user.repository';
import { hashPassword } from '../../shared/dashboard-users/password';
import { listAudit } from '../../shared/audit/audit.repository';
import { CACHE_SCHEMA_VERSION } from '../../shared/redis/key-names';
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
    expect(before).toBeDefined(); // the form's visit was given a session cookie
    // A visitor's session (only the form's CSRF token) is kept an hour, a signed-in one 12 h (TTL −1 or −2: none, or no key).
    const visitorTtl = await h.env.redis.ttl(sessionKey(before!));
    expect(visitorTtl).toBeGreaterThan(3600 - 60);
    expect(visitorTtl).toBeLessThanOrEqual(3600);
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
      error: {
        code: 'RATE_LIMIT_EXCEEDED',
        statusCode: 429,
        message: expect.stringContaining('Too many failed sign-ins'),
        traceId: envelope.headers.get('x-request-id'),
        docUrl: '/docs#error-rate_limit_exceeded',
      },
    });
    await h.env.redis.del(...(await h.env.keysMatching(`${h.env.prefix}:${CACHE_SCHEMA_VERSION}:{signin}:failures:email:*`)));
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
      const ttl = await h.env.redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(3000);
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

describe('sign-in throttle under concurrency, and remembered devices', () => {
  /** A fresh browser at `address` that has loaded the sign-in form (it holds a session and a CSRF token). */
  const atForm = async (address: string) => {
    const browser = client(address);
    await browser.get('/signin');
    return browser;
  };
  const statusCounts = (statuses: number[]) => statuses.reduce<Record<number, number>>((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {});

  it('verifies at most 5 of 20 simultaneous wrong passwords for one email from one address; the rest get 429', async () => {
    await addUser(h.env.db, 'dash-acme', 'burst@acme.test', 'viewer');
    const browser = await atForm('203.0.113.10');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => browser.post('/signin', { email: 'burst@acme.test', password: 'wrong' })),
    );
    expect(statusCounts(answers.map((a) => a.status))).toEqual({ 401: 5, 429: 15 });
  });

  it('keeps a right password out when it comes in a burst past the limit, from other addresses too', async () => {
    await addUser(h.env.db, 'dash-acme', 'target@acme.test', 'viewer');
    const attackers = await Promise.all(Array.from({ length: 39 }, (_, i) => atForm(`203.0.113.${100 + i}`)));
    const rightOne = await atForm('203.0.113.200');
    const wrong = attackers.map((browser) => browser.post('/signin', { email: 'target@acme.test', password: 'wrong' }));
    // Sent once the burst has filled the email's allowance (one refusal seen), while it is still being verified.
    const firstRefusal = await Promise.race(wrong.map((p) => p.then((a) => (a.status === 429 ? a : new Promise<never>(() => undefined)))));
    expect(firstRefusal.status).toBe(429);
    const right = await rightOne.post('/signin', { email: 'target@acme.test', password: 'a long enough password' });
    const statuses = [...(await Promise.all(wrong)).map((a) => a.status), right.status];
    expect(right.status).toBe(429);
    expect(statusCounts(statuses)).toEqual({ 401: 5, 429: 35 });
  });

  it('verifies at most 5 of 20 simultaneous attempts for different emails from one address', async () => {
    const browser = await atForm('203.0.113.11');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => browser.post('/signin', { email: `nobody${i}@acme.test`, password: 'x' })),
    );
    expect(statusCounts(answers.map((a) => a.status))).toEqual({ 401: 5, 429: 15 });
  });

  it('verifies one password at a time and refuses sign-ins past its queue with 429 and Retry-After: 1, unverified', async () => {
    const browsers = await Promise.all(Array.from({ length: 40 }, (_, i) => atForm(`203.0.113.${50 + i}`)));
    const answers = await Promise.all(
      browsers.map((browser, i) => browser.post('/signin', { email: `flood${i}@acme.test`, password: 'x' })),
    );
    const busy = answers.filter((a) => a.status === 429);
    expect(busy.length).toBeGreaterThan(0);
    for (const answer of busy) expect(answer.headers.get('retry-after')).toBe('1');
    expect(statusCounts(answers.map((a) => a.status))).toEqual({ 401: 40 - busy.length, 429: busy.length });
    // A refused attempt was never verified and kept no place: the same address may try again at once.
    const again = await browsers[answers.indexOf(busy[0]!)]!.post('/signin', { email: 'flood-again@acme.test', password: 'x' });
    expect(again.status).toBe(401);
  });

  it('lets a browser that signed in before in past a lock-out made elsewhere, tells the user, and audits the refusals', async () => {
    const account = await addUser(h.env.db, 'dash-device', 'device@acme.test', 'owner');
    // The user's own browser signs in once (it is given a device cookie) and signs out.
    const own = client('198.51.100.150');
    expect((await own.signIn('device@acme.test')).status).toBe(303);
    expect(own.device).toBeDefined();
    await own.post('/signout');
    // Someone who knows the email fails 5 times from 5 addresses; the email is locked for unknown browsers.
    for (let i = 0; i < 5; i++) expect((await client(`192.0.2.${10 + i}`).signIn('device@acme.test', 'guess')).status).toBe(401);
    expect((await client('192.0.2.20').signIn('device@acme.test')).status).toBe(429);
    // …and fails 5 times for other emails from the user's own address, locking that address for unknown browsers.
    for (let i = 0; i < 5; i++) expect((await client('198.51.100.150').signIn(`other${i}@acme.test`, 'guess')).status).toBe(401);
    expect((await client('198.51.100.150').signIn('device@acme.test')).status).toBe(429);
    // Every failure and the first refusal of the window are audited (after the answers): then the user's own browser gets in.
    const attempts = async () =>
      (await listAudit(h.env.db, account, 50)).filter(
        (e) => e.action === 'session.sign-in-failed' || e.action === 'session.sign-in-refused',
      );
    await eventually(async () => (await attempts()).length === 6);
    expect((await attempts()).filter((e) => e.action === 'session.sign-in-refused')).toHaveLength(1);
    await own.get('/signin');
    const back = await own.post('/signin', { email: 'device@acme.test', password: 'a long enough password' });
    expect(back).toMatchObject({ status: 303, location: '/keys/test' });
    // The first page after signing in tells of the 6 attempts since the last visit, once.
    const first = await own.get('/keys/test');
    expect(first.body).toMatch(/data-notice="failed-sign-ins"[^>]*>\s*Since your last visit there were 6 failed sign-ins with your email/);
    expect((await own.get('/keys/test')).body).not.toContain('data-notice="failed-sign-ins"');
  });

  it("gives a remembered browser its own 5 attempts, and never another email's allowance", async () => {
    await addUser(h.env.db, 'dash-device', 'own5@acme.test', 'viewer');
    await addUser(h.env.db, 'dash-device', 'locked@acme.test', 'viewer');
    const own = client('198.51.100.160');
    expect((await own.signIn('own5@acme.test')).status).toBe(303);
    await own.post('/signout');
    for (let i = 0; i < 5; i++) expect((await own.signIn('own5@acme.test', 'typo')).status).toBe(401);
    expect((await own.signIn('own5@acme.test')).status).toBe(429);
    // Another browser is not held back by this device's failures.
    expect((await client('198.51.100.161').signIn('own5@acme.test')).status).toBe(303);
    // The device cookie is for own5@: it does not open another email's lock-out.
    for (let i = 0; i < 5; i++) expect((await client(`192.0.2.${40 + i}`).signIn('locked@acme.test', 'guess')).status).toBe(401);
    const other = client('198.51.100.162');
    other.device = own.device;
    expect((await other.signIn('locked@acme.test')).status).toBe(429);
    // A forged or altered device cookie counts as none.
    other.device = `${own.device!.slice(0, -2)}xx`;
    expect((await other.signIn('locked@acme.test')).status).toBe(429);
  });

  it('issues the device cookie HttpOnly, SameSite=Strict and long-lived', async () => {
    await addUser(h.env.db, 'dash-device', 'cookie@acme.test', 'viewer');
    const browser = client('198.51.100.170');
    const res = await browser.signIn('cookie@acme.test');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('cos_device='));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).toMatch(/Max-Age=15552000/);
    expect(cookie).not.toContain('cookie@acme.test');
  });

  it('runs every dashboard thread at the lowest CPU priority by default (DASHBOARD_NICE 19), so a flood yields to the API', async () => {
    const env = h.env.processEnv({ TRUST_PROXY: 'loopback' });
    delete env.DASHBOARD_NICE;
    const niced = await spawnDashboard(env);
    try {
      // /proc/<pid>/task/<tid>/stat: the 19th field is the nice value; count after the command name's ')'.
      const niceOf = (pid: number, tid = pid) =>
        Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(')').pop()!.trim().split(' ')[16]);
      const pid = niced.child.pid!;
      const threads = readdirSync(`/proc/${pid}/task`).map(Number);
      expect(threads.length).toBeGreaterThan(1);
      for (const tid of threads) expect(niceOf(pid, tid)).toBe(19);
      expect(niceOf(dashboard.child.pid!)).toBe(niceOf(process.pid));
    } finally {
      await stop(niced);
    }
  });
});
