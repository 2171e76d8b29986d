import { Secret, TOTP } from 'otpauth';
import { listAudit } from '../../shared/audit/audit.repository';
import { hashRecoveryCode } from '../../shared/dashboard-users/recovery-codes';
import { findUserForSignIn } from '../../shared/dashboard-users/user.repository';
import { runCliCaptured } from '../support/cli';
import { addUser, DashboardClient, startDashboardInProcess } from '../support/dashboard';
import { createTestEnv, type TestEnv } from '../support/test-env';

/**
 * Two-factor sign-in, password changes and the sessions page, on a dashboard run in this
 * process over real Postgres and Redis with a clock the tests move: TOTP codes, the attempt
 * limits' windows and the absolute session lifetime all read it.
 */
let env: TestEnv;
let closeDashboard: () => Promise<void>;
let url: string;
let now = Date.parse('2026-11-30T10:00:00.000Z');
let nextClient = 1;
const PASSWORD = 'a long enough password';

const client = (address = `198.51.100.${nextClient++}`) => new DashboardClient(url, address);
/** The code an authenticator app holding `secret` shows at the test clock's time (plus `offsetMs`). */
const codeFor = (secret: string, offsetMs = 0) => TOTP.generate({ secret: Secret.fromBase32(secret), timestamp: now + offsetMs });
/** Moves the clock to the next 30-second time-step, so a new code is due. */
const nextStep = () => (now += 30_000);
const actions = async (accountId: string, n = 20) => (await listAudit(env.db, accountId, n)).map((e) => e.action);
/** The newest `n` actions once they include `action`: some entries are written just after the answer. */
async function audited(accountId: string, action: Awaited<ReturnType<typeof actions>>[number], n = 20) {
  const deadline = Date.now() + 2000;
  for (;;) {
    const found = await actions(accountId, n);
    if (found.includes(action) || Date.now() > deadline) return found;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  env = await createTestEnv();
  ({ url, close: closeDashboard } = await startDashboardInProcess(env, () => now));
});
afterAll(async () => {
  await closeDashboard();
  await env.close();
});

/** Turns on 2FA for the signed-in browser's user; returns the secret and the recovery codes. */
async function enrol(browser: DashboardClient): Promise<{ secret: string; recoveryCodes: string[] }> {
  expect(await browser.post('/account/two-factor/enrol')).toMatchObject({ status: 303, location: '/account/two-factor' });
  const page = await browser.get('/account/two-factor');
  const secret = /data-secret>([A-Z2-7]+)</.exec(page.body)![1]!;
  const confirmed = await browser.post('/account/two-factor/confirm', { code: codeFor(secret) });
  expect(confirmed).toMatchObject({ status: 303, location: '/account/two-factor' });
  const shown = await browser.get('/account/two-factor');
  const recoveryCodes = [...shown.body.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!);
  return { secret, recoveryCodes };
}

/** Email and password, then the code: a full sign-in with two-factor on. */
async function signInWithCode(browser: DashboardClient, email: string, code: string) {
  expect(await browser.signIn(email)).toMatchObject({ status: 303, location: '/signin/code' });
  return browser.post('/signin/code', { code });
}

describe('two-factor sign-in', () => {
  let account: string;
  let secret: string;
  let recoveryCodes: string[];

  beforeAll(async () => {
    account = await addUser(env.db, 'tfa-acme', 'owner@tfa.test', 'owner');
  });

  it('enrols: a QR code drawn on the server, the secret as text, on only once a code confirms it; recovery codes shown once', async () => {
    const other = client();
    await other.signIn('owner@tfa.test');
    const browser = client();
    await browser.signIn('owner@tfa.test');
    expect((await browser.get('/account/two-factor')).body).toContain('Two-factor sign-in is off');
    expect((await browser.post('/account/two-factor/enrol')).status).toBe(303);
    const page = await browser.get('/account/two-factor');
    expect(page.body).toMatch(/<div class="qr"[^>]*><svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(page.body).not.toMatch(/<script>|https?:\/\/(?!www\.w3\.org)/);
    secret = /data-secret>([A-Z2-7]+)</.exec(page.body)![1]!;
    expect(secret).toHaveLength(32);
    // A wrong code (or one of long ago) leaves it off.
    const wrong = await browser.post('/account/two-factor/confirm', { code: codeFor(secret, -10 * 60_000) });
    expect(wrong.status).toBe(401);
    expect((await findUserForSignIn(env.db, 'owner@tfa.test'))!.twoFactorSince).toBeNull();
    // Post/redirect/get: the codes are on the page redirected to, never in the POST's answer or a URL.
    const confirmed = await browser.post('/account/two-factor/confirm', { code: codeFor(secret) });
    expect(confirmed).toMatchObject({ status: 303, location: '/account/two-factor' });
    expect(confirmed.body).not.toMatch(/<code>[a-z0-9]{4,}-/);
    const shown = await browser.get('/account/two-factor');
    expect(shown.status).toBe(200);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    expect(shown.body).toContain('data-recovery-codes');
    recoveryCodes = [...shown.body.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!);
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    // Stored: the secret sealed, the recovery codes hashed.
    const row = await env.db.selectFrom('dashboard_users').selectAll().where('email', '=', 'owner@tfa.test').executeTakeFirstOrThrow();
    expect(row.totp_secret).toMatch(/^v1\./);
    expect(row.totp_secret).not.toContain(secret);
    const stored = JSON.stringify(await env.db.selectFrom('dashboard_recovery_codes').selectAll().execute());
    for (const code of recoveryCodes) expect(stored).not.toContain(code);
    // Shown once: a reload shows the page saying it is on, without the codes.
    const after = await browser.get('/account/two-factor');
    expect(after.body).toContain('Two-factor sign-in is on');
    expect(after.body).toContain('10 recovery codes left unused');
    expect(after.body).not.toContain(recoveryCodes[0]);
    // Turning it on ended the user's other sessions.
    expect(await other.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    expect(await audited(account, 'two-factor.enable')).toContain('two-factor.enable');
  });

  it('signs in with the password and then a code; the password alone opens nothing', async () => {
    nextStep();
    const browser = client();
    expect(await browser.signIn('owner@tfa.test')).toMatchObject({ status: 303, location: '/signin/code' });
    expect(await browser.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    expect(await browser.get('/signin/code')).toMatchObject({ status: 200 });
    const done = await browser.post('/signin/code', { code: codeFor(secret) });
    expect(done).toMatchObject({ status: 303, location: '/keys/test' });
    expect((await browser.get('/keys/test')).status).toBe(200);
    expect((await listAudit(env.db, account, 1))[0]).toMatchObject({ action: 'session.sign-in', actor: 'owner@tfa.test' });
  });

  it('lands, after the code, on the page that was asked for before signing in', async () => {
    nextStep();
    const browser = client();
    expect(await browser.get('/patterns')).toMatchObject({ status: 303, location: '/signin?next=%2Fpatterns' });
    await browser.get('/signin?next=%2Fpatterns');
    expect(await browser.post('/signin', { email: 'owner@tfa.test', password: 'a long enough password', next: '/patterns' })).toMatchObject(
      {
        status: 303,
        location: '/signin/code',
      },
    );
    await browser.get('/signin/code');
    expect(await browser.post('/signin/code', { code: codeFor(secret) })).toMatchObject({ status: 303, location: '/patterns' });
  });

  it('refuses a code used once already, even within its window, and takes the next one', async () => {
    nextStep();
    const code = codeFor(secret);
    expect(await signInWithCode(client(), 'owner@tfa.test', code)).toMatchObject({ status: 303, location: '/keys/test' });
    const replay = client();
    const refused = await signInWithCode(replay, 'owner@tfa.test', code);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('used already');
    // The code of the step before counts as older than the one used: refused as well.
    expect((await replay.post('/signin/code', { code: codeFor(secret, -30_000) })).status).toBe(401);
    nextStep();
    expect(await replay.post('/signin/code', { code: codeFor(secret) })).toMatchObject({ status: 303, location: '/keys/test' });
    expect(await audited(account, 'session.code-failed')).toContain('session.code-failed');
  });

  it('allows 5 wrong codes per user in 15 minutes, then refuses even the right one with 429, all at once too', async () => {
    // Past the window of the wrong codes typed above.
    now += 15 * 60_000 + 1000;
    const browsers = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const browser = client();
        expect((await browser.signIn('owner@tfa.test')).location).toBe('/signin/code');
        return browser;
      }),
    );
    // 8 wrong codes at the same moment from 3 browsers: 5 are checked, 3 refused.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => browsers[i % 3]!.post('/signin/code', { code: '000000' })));
    expect(answers.map((a) => a.status).sort()).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const right = await browsers[0]!.post('/signin/code', { code: codeFor(secret) });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(800);
    // The window is over 15 minutes later (of the clock the limit reads).
    now += 15 * 60_000 + 1000;
    const again = client();
    expect(await signInWithCode(again, 'owner@tfa.test', codeFor(secret))).toMatchObject({ status: 303, location: '/keys/test' });
  });

  it('takes each recovery code once, and audits its use', async () => {
    nextStep();
    const code = recoveryCodes[0]!;
    expect(await signInWithCode(client(), 'owner@tfa.test', code.toUpperCase())).toMatchObject({ status: 303, location: '/keys/test' });
    expect(await audited(account, 'two-factor.recovery-code-used', 3)).toContain('two-factor.recovery-code-used');
    expect((await signInWithCode(client(), 'owner@tfa.test', code)).status).toBe(401);
    const browser = client();
    expect((await signInWithCode(browser, 'owner@tfa.test', recoveryCodes[1]!)).status).toBe(303);
    expect((await browser.get('/account/two-factor')).body).toContain('8 recovery codes left unused');
  });

  it('ends the code step after 5 minutes: the password is asked again', async () => {
    nextStep();
    const browser = client();
    expect((await browser.signIn('owner@tfa.test')).location).toBe('/signin/code');
    now += 5 * 60_000 + 1000;
    const late = await browser.post('/signin/code', { code: codeFor(secret) });
    expect(late.status).toBe(401);
    expect(late.body).toContain('took too long');
    expect(await browser.get('/signin/code')).toMatchObject({ status: 303, location: '/signin' });
  });

  it('turns 2FA off only with the current password, ending the other sessions', async () => {
    nextStep();
    const browser = client();
    expect((await signInWithCode(browser, 'owner@tfa.test', codeFor(secret))).status).toBe(303);
    nextStep();
    const other = client();
    expect((await signInWithCode(other, 'owner@tfa.test', codeFor(secret))).status).toBe(303);
    await browser.get('/account/two-factor');
    const wrong = await browser.post('/account/two-factor/disable', { password: 'not my password' });
    expect(wrong.status).toBe(401);
    expect((await findUserForSignIn(env.db, 'owner@tfa.test'))!.twoFactorSince).not.toBeNull();
    expect((await browser.post('/account/two-factor/disable', {})).status).toBe(400);
    const off = await browser.post('/account/two-factor/disable', { password: PASSWORD });
    expect(off).toMatchObject({ status: 303, location: '/account/two-factor?done=two-factor-off' });
    expect((await findUserForSignIn(env.db, 'owner@tfa.test'))!.twoFactorSince).toBeNull();
    expect(await other.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    expect((await browser.get('/keys/test')).status).toBe(200);
    expect(await client().signIn('owner@tfa.test')).toMatchObject({ status: 303, location: '/keys/test' });
    expect(await audited(account, 'two-factor.disable', 5)).toContain('two-factor.disable');
  });
});

describe('a confirmation of enrolment sent several times at once', () => {
  it('turns 2FA on once, and the recovery codes shown are the ones kept', async () => {
    const account = await addUser(env.db, 'tfa-twice', 'twice@tfa.test', 'owner');
    nextStep();
    const browser = client();
    await browser.signIn('twice@tfa.test');
    await browser.post('/account/two-factor/enrol');
    const secret = /data-secret>([A-Z2-7]+)</.exec((await browser.get('/account/two-factor')).body)![1]!;
    const code = codeFor(secret);
    const answers = await Promise.all(Array.from({ length: 4 }, () => browser.post('/account/two-factor/confirm', { code })));
    expect(answers.map((a) => [a.status, a.location])).toEqual(Array(4).fill([303, '/account/two-factor']));
    const shown = [...(await browser.get('/account/two-factor')).body.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!);
    expect(shown).toHaveLength(10);
    const kept = await env.db
      .selectFrom('dashboard_recovery_codes')
      .innerJoin('dashboard_users', 'dashboard_users.id', 'dashboard_recovery_codes.user_id')
      .select('code_hash')
      .where('dashboard_users.email', '=', 'twice@tfa.test')
      .execute();
    expect(kept.map((r) => r.code_hash).sort()).toEqual(shown.map(hashRecoveryCode).sort());
    expect((await audited(account, 'two-factor.enable')).filter((action) => action === 'two-factor.enable')).toEqual(['two-factor.enable']);
  });
});

describe('an account that requires two-factor sign-in', () => {
  it('lets only an owner with 2FA require it; its users without it can only enrol (or sign out) until they have', async () => {
    const account = await addUser(env.db, 'tfa-required', 'boss@required.test', 'owner');
    await addUser(env.db, 'tfa-required', 'staff@required.test', 'viewer');
    const owner = client();
    await owner.signIn('boss@required.test');
    // Not before the owner has it: they would lock themselves into enrolment.
    expect((await owner.post('/account/two-factor/require', { required: 'yes' })).status).toBe(400);
    nextStep();
    await enrol(owner);
    await owner.get('/account/two-factor');
    expect(await owner.post('/account/two-factor/require', { required: 'yes' })).toMatchObject({
      status: 303,
      location: '/account/two-factor?done=required',
    });
    expect(await audited(account, 'account.two-factor-required', 3)).toContain('account.two-factor-required');
    // A viewer cannot change it.
    const staff = client();
    expect(await staff.signIn('staff@required.test')).toMatchObject({ status: 303, location: '/keys/test' });
    expect(await staff.get('/keys/test')).toMatchObject({ status: 303, location: '/account/two-factor' });
    expect(await staff.get('/audit')).toMatchObject({ status: 303, location: '/account/two-factor' });
    const enrolPage = await staff.get('/account/two-factor');
    expect(enrolPage.status).toBe(200);
    expect(enrolPage.body).toContain('This account requires two-factor sign-in');
    expect(enrolPage.body).not.toContain('href="/keys/test"');
    const post = await staff.post('/account/sessions/end-others', {}, { Accept: 'application/json' });
    expect(post.status).toBe(403);
    nextStep();
    await enrol(staff);
    expect((await staff.get('/keys/test')).status).toBe(200);
    expect((await staff.post('/account/two-factor/require', { required: 'no' })).status).toBe(403);
    expect((await owner.post('/account/two-factor/require', { required: 'no' })).location).toBe('/account/two-factor?done=optional');
  });
});

describe('cos users reset-2fa', () => {
  it("turns a user's 2FA off, ends their sessions and audits it as the operator's", async () => {
    const account = await addUser(env.db, 'tfa-reset', 'lost@reset.test', 'owner');
    const browser = client();
    await browser.signIn('lost@reset.test');
    nextStep();
    await enrol(browser);
    const cli = (argv: string[]) => runCliCaptured(argv, env.processEnv());
    const reset = await cli(['users', 'reset-2fa', '--email', 'Lost@Reset.test', '--json']);
    expect(reset).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(reset.out)).toMatchObject({ email: 'lost@reset.test', twoFactorWasOn: true, sessionsEnded: 1 });
    expect(await browser.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    expect(await client().signIn('lost@reset.test')).toMatchObject({ status: 303, location: '/keys/test' });
    const entries = await listAudit(env.db, account, 5);
    expect(entries.find((e) => e.action === 'two-factor.reset')).toMatchObject({ actor: 'operator (cli)', subject: 'lost@reset.test' });
    expect(await cli(['users', 'reset-2fa', '--email', 'nobody@reset.test'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('no dashboard user'),
    });
    expect(await cli(['users', 'reset-2fa'])).toMatchObject({ code: 2, err: expect.stringContaining('--email is required') });
  });
});

describe('changing the password', () => {
  it('needs the current password and a new one as the CLI checks it; ends the other sessions, not this one', async () => {
    const account = await addUser(env.db, 'pw-acme', 'change@pw.test', 'viewer');
    const browser = client();
    const other = client();
    await browser.signIn('change@pw.test');
    await other.signIn('change@pw.test');
    await browser.get('/account/password');
    const change = (current: string, next: string, confirm = next) => browser.post('/account/password', { current, next, confirm });
    expect((await change('wrong password!', 'a brand new password')).status).toBe(401);
    const short = await change(PASSWORD, 'short');
    expect(short.status).toBe(400);
    expect(short.body).toContain('at least 12 characters');
    expect((await change(PASSWORD, 'a brand new password', 'a different one!!')).status).toBe(400);
    expect(await change(PASSWORD, 'a brand new password')).toMatchObject({
      status: 303,
      location: '/account/password?done=password-changed',
    });
    expect((await browser.get('/account/password?done=password-changed')).body).toContain('Your password is changed');
    expect((await browser.get('/keys/test')).status).toBe(200);
    expect(await other.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    expect((await client().signIn('change@pw.test')).status).toBe(401);
    expect(await client().signIn('change@pw.test', 'a brand new password')).toMatchObject({ status: 303, location: '/keys/test' });
    expect(await audited(account, 'password.change', 5)).toContain('password.change');
  });

  it('limits wrong current passwords to 5 per user in 15 minutes', async () => {
    await addUser(env.db, 'pw-acme', 'guess@pw.test', 'viewer');
    const browser = client();
    await browser.signIn('guess@pw.test');
    await browser.get('/account/password');
    for (let i = 0; i < 5; i++) {
      expect(
        (
          await browser.post('/account/password', {
            current: `guess ${i}`,
            next: 'another long password',
            confirm: 'another long password',
          })
        ).status,
      ).toBe(401);
    }
    const right = await browser.post('/account/password', {
      current: PASSWORD,
      next: 'another long password',
      confirm: 'another long password',
    });
    expect(right.status).toBe(429);
    now += 15 * 60_000 + 1000;
  });
});

describe('sessions', () => {
  const signInAs = async (browser: DashboardClient, userAgent: string) => {
    const ua = { 'User-Agent': userAgent };
    await browser.get('/signin', ua);
    const res = await browser.post('/signin', { email: 'many@sessions.test', password: PASSWORD }, ua);
    expect(res).toMatchObject({ status: 303, location: '/keys/test' });
    await browser.get('/keys/test', ua);
  };

  it('lists the user’s sessions with this one marked, and signs out everywhere else', async () => {
    const account = await addUser(env.db, 'sess-acme', 'many@sessions.test', 'viewer');
    const firefox = client('198.51.100.201');
    const chrome = client('198.51.100.202');
    const safari = client('198.51.100.203');
    await signInAs(firefox, 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0');
    await signInAs(chrome, 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36');
    await signInAs(
      safari,
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile/15E148 Safari/604.1',
    );
    const list = await firefox.get('/account/sessions');
    expect(list.status).toBe(200);
    const rows = [...list.body.matchAll(/<tr\s*(data-current)?>([\s\S]*?)<\/tr>/g)].slice(1);
    expect(rows).toHaveLength(3);
    const current = rows.filter((r) => r[1] === 'data-current');
    expect(current).toHaveLength(1);
    expect(current[0]![2]).toContain('Firefox on Linux');
    expect(current[0]![2]).toContain('198.51.100.201');
    expect(current[0]![2]).toContain('this session');
    expect(list.body).toContain('Chrome on Windows');
    expect(list.body).toContain('Safari on iOS');
    expect(list.body).toContain('Sign out everywhere else (2)');
    expect(await firefox.post('/account/sessions/end-others')).toMatchObject({
      status: 303,
      location: '/account/sessions?done=ended-others',
    });
    expect(await chrome.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    expect(await safari.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    const after = await firefox.get('/account/sessions?done=ended-others');
    expect(after.body).toContain('You are signed in nowhere else');
    expect(after.body).toContain('Your other sessions have ended');
    expect(await audited(account, 'session.end-others', 5)).toContain('session.end-others');
  });

  it('ends a session DASHBOARD_SESSION_MAX_AGE (7 days) after its sign-in, however active', async () => {
    await addUser(env.db, 'sess-acme', 'week@sessions.test', 'viewer');
    const browser = client();
    await browser.signIn('week@sessions.test');
    const key = `${env.keys.dashboardSessionPrefix}${browser.sessionId()!}`;
    // Busy all week: each day a page (the idle expiry never comes).
    for (let day = 1; day < 7; day++) {
      now += 86_400_000;
      expect((await browser.get('/keys/test')).status).toBe(200);
    }
    // An hour before the end, the cookie and the Redis entry last only that hour, not the 12 h idle period.
    now += 86_400_000 - 3_600_000;
    const late = await browser.get('/keys/test');
    expect(late.status).toBe(200);
    const expires = /Expires=([^;]+)/.exec(late.headers.getSetCookie().find((c) => c.startsWith('cos_dashboard='))!)![1]!;
    expect(Date.parse(expires) - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(await env.redis.ttl(key)).toBeLessThanOrEqual(3600);
    now += 3_600_000;
    expect(await browser.get('/keys/test')).toMatchObject({ status: 303, location: '/signin' });
    expect(
      await env.db
        .selectFrom('dashboard_sessions')
        .selectAll()
        .where('user_id', '=', (await findUserForSignIn(env.db, 'week@sessions.test'))!.id)
        .execute(),
    ).toEqual([]);
  });

  it('ends a session at sign-out: its record goes with it', async () => {
    await addUser(env.db, 'sess-acme', 'out@sessions.test', 'viewer');
    const browser = client();
    await browser.signIn('out@sessions.test');
    const user = (await findUserForSignIn(env.db, 'out@sessions.test'))!;
    const count = async () => (await env.db.selectFrom('dashboard_sessions').select('id').where('user_id', '=', user.id).execute()).length;
    expect(await count()).toBe(1);
    await browser.post('/signout');
    expect(await count()).toBe(0);
  });
});
