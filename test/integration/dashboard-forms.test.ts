import { setRestricted } from '../../shared/accounts/account.repository';
import { findKeyById, listKeys } from '../../shared/credentials/key.repository';
import { KeyService } from '../../shared/credentials/key.service';
import { addUser, DashboardClient, spawnDashboard, type PageResponse } from '../support/dashboard';
import { stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/**
 * Forms that are safe to repeat (post/redirect/get, one-time tokens, a key's secret shown once,
 * confirmation pages) and what the pages around them show, against the built dashboard.
 */
let env: TestEnv;
let dashboard: Spawned & { url: string };
let account: string;
let owner: DashboardClient;
let viewer: DashboardClient;

beforeAll(async () => {
  env = await createTestEnv();
  account = await addUser(env.db, 'forms-acme', 'owner@forms.test', 'owner');
  await addUser(env.db, 'forms-acme', 'viewer@forms.test', 'viewer');
  dashboard = await spawnDashboard(env.processEnv({ TRUST_PROXY: 'loopback' }));
  owner = new DashboardClient(dashboard.url, '193.0.6.139');
  viewer = new DashboardClient(dashboard.url, '198.51.100.7');
  await owner.signIn('owner@forms.test');
  await viewer.signIn('viewer@forms.test');
});
afterAll(async () => {
  await stop(dashboard);
  await env.close();
});

const shownKey = (page: PageResponse) => /id="new-key" readonly value="(cos_sk_[a-z]+_[0-9A-Za-z]+)"/.exec(page.body)?.[1];
const alert = (page: PageResponse) =>
  /role="alert">([\s\S]*?)<\/div>/
    .exec(page.body)?.[1]
    ?.replace(/<[^>]+>/g, '')
    .replace(/\s+/g, ' ');
const named = async (name: string) => (await listKeys(env.db, account)).filter((k) => k.name === name);
const asJson = { Accept: 'application/json' };

describe('forms safe to repeat', () => {
  it('redirects 303 after creating a key, shows its secret once, and a reload neither shows it nor creates another', async () => {
    await owner.get('/keys/test');
    const posted = await owner.post('/keys/test', { name: 'once only', scopes: 'context' });
    expect(posted).toMatchObject({ status: 303, location: '/keys/test' });
    expect(posted.body).not.toMatch(/cos_sk_/);
    const first = await owner.get('/keys/test');
    const key = shownKey(first)!;
    expect(key).toMatch(/^cos_sk_test_/);
    expect(first.body).toContain('Key “once only” created.');
    // Reloading the page it led to: the secret is gone.
    const reloaded = await owner.get('/keys/test');
    expect(shownKey(reloaded)).toBeUndefined();
    expect(reloaded.body).not.toContain(key);
    expect(await named('once only')).toHaveLength(1);
  });

  it('acts once for a form sent twice (the same one-time token): one key, and the repeat says so', async () => {
    await owner.get('/keys/test');
    const again = await owner.post('/keys/test', { name: 'sent twice', scopes: 'context' });
    const repeat = await owner.post('/keys/test', { name: 'sent twice', scopes: 'context' });
    expect(again).toMatchObject({ status: 303, location: '/keys/test' });
    expect(repeat).toMatchObject({ status: 303, location: '/keys/test?again=acted' });
    const page = await owner.get(repeat.location!);
    expect(page.body).toContain('This form was already sent');
    // The secret waited in the session for the page that followed.
    expect(shownKey(page)).toMatch(/^cos_sk_test_/);
    expect(await named('sent twice')).toHaveLength(1);
  });

  it('creates one key for a double click (two submissions of one token at once), both answered 303', async () => {
    await owner.get('/keys/test');
    const both = await Promise.all([0, 1].map(() => owner.post('/keys/test', { name: 'double click', scopes: 'context' })));
    expect(both.map((a) => a.status)).toEqual([303, 303]);
    expect(both.map((a) => a.location).sort()).toEqual(['/keys/test', '/keys/test?again=acted']);
    expect(shownKey(await owner.get('/keys/test'))).toMatch(/^cos_sk_test_/);
    expect(await named('double click')).toHaveLength(1);
  });

  it('refuses a form without its one-time token with 400, on the form again', async () => {
    await owner.get('/keys/test');
    const page = await owner.post('/keys/test', { name: 'no token', scopes: 'context', _once: null });
    expect(page.status).toBe(400);
    expect(alert(page)).toContain('missing its one-time token');
    expect(page.body).toContain('action="/keys/test"');
    expect(await named('no token')).toHaveLength(0);
  });

  it('re-renders the form with the refusal status and a clear message: 400, 403, and 401 without a session', async () => {
    await owner.get('/keys/test');
    const invalid = await owner.post('/keys/test', { name: 'n'.repeat(101), scopes: 'admin' });
    expect(invalid.status).toBe(400);
    expect(alert(invalid)).toContain('The form has invalid fields');
    expect(alert(invalid)).toContain('name: at most 100 characters');
    expect(invalid.body).toContain('id="create-title"');
    // The refusal freed the token: the corrected form goes through.
    expect((await owner.post('/keys/test', { name: 'corrected', scopes: 'context' })).status).toBe(303);

    await owner.get('/keys/test');
    const forged = await owner.post('/keys/test', { name: 'forged', _csrf: 'f'.repeat(64) });
    expect(forged.status).toBe(403);
    expect(alert(forged)).toContain('security token');
    expect(forged.body).toContain('id="create-title"');

    const forbidden = await viewer.post('/keys/test', { name: 'by viewer', scopes: 'context' });
    expect(forbidden.status).toBe(403);
    expect(alert(forbidden)).toContain('Viewers can read this account but not change it');

    const anonymous = new DashboardClient(dashboard.url, '198.51.100.9');
    const unauthorized = await anonymous.post('/keys/test', { name: 'anonymous', scopes: 'context' });
    expect(unauthorized.status).toBe(401);
    expect(alert(unauthorized)).toContain('Sign in to continue');
    expect(await named('forged')).toHaveLength(0);
    expect(await named('by viewer')).toHaveLength(0);
  });

  it('rotates with a 303 and refuses to rotate a key that is already rotating out', async () => {
    const { id } = await new KeyService(env.db, TEST_SECRET).create({ account, environment: 'test', name: 'rotate me' });
    await owner.get('/keys/test');
    const rotated = await owner.submit(`/keys/test/${id}/rotate`, { grace: '1h' });
    expect(rotated.posted).toMatchObject({ status: 303, location: '/keys/test' });
    expect(shownKey(rotated.page!)).toMatch(/^cos_sk_test_/);
    // A stale page still offering Rotate: a new token, the same key.
    const before = (await findKeyById(env.db, id))!.expiresAt;
    const refused = await owner.post(`/keys/test/${id}/rotate`, { grace: '7d' });
    expect(refused.status).toBe(400);
    expect(alert(refused)).toContain('is already rotating out until');
    expect(alert(refused)).toMatch(/until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    expect((await findKeyById(env.db, id))!.expiresAt).toBe(before);
    expect(await named('rotate me')).toHaveLength(2);
    expect((await owner.post(`/keys/test/${id}/rotate`, { grace: '1h' }, asJson)).status).toBe(400);
  });

  it('rotates a key once when two pages rotate it at the same moment', async () => {
    const { id } = await new KeyService(env.db, TEST_SECRET).create({ account, environment: 'test', name: 'raced rotation' });
    await owner.get('/keys/test');
    // Two tabs: two renderings of the page, two tokens.
    const tokens = ['tab-one-' + 'a'.repeat(20), 'tab-two-' + 'b'.repeat(20)];
    const answers = await Promise.all(tokens.map((_once) => owner.post(`/keys/test/${id}/rotate`, { grace: '1h', _once })));
    expect(answers.map((a) => a.status).sort()).toEqual([303, 400]);
    expect(alert(answers.find((a) => a.status === 400)!)).toContain('is already rotating out until');
    expect(await named('raced rotation')).toHaveLength(2);
  });

  it('asks on a page of its own before revoking or deleting, naming the key and its last use', async () => {
    const keys = new KeyService(env.db, TEST_SECRET);
    const { id } = await keys.create({ account, environment: 'live', name: 'confirm me' });
    await env.db
      .updateTable('api_keys')
      .set({ last_used_at: new Date('2026-03-04T17:05:09Z') })
      .where('id', '=', id)
      .execute();
    const record = (await findKeyById(env.db, id))!;
    const list = await owner.get('/keys/live');
    // The list links to the confirmation; it has no form that revokes or deletes at once.
    expect(list.body).toContain(`href="/keys/live/${id}/revoke"`);
    expect(list.body).toContain(`href="/keys/live/${id}/delete"`);
    expect(list.body).not.toContain(`action="/keys/live/${id}/revoke"`);

    const confirm = await owner.get(`/keys/live/${id}/revoke`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('Revoke key “confirm me” (…' + record.last4 + ')?');
    expect(confirm.body).toContain('<dd>live</dd>');
    expect(confirm.body).toContain('2026-03-04 17:05 UTC');
    expect(confirm.body).toContain(`action="/keys/live/${id}/revoke"`);
    expect(confirm.body).not.toMatch(/<script(?![^>]*src=)/);
    expect((await findKeyById(env.db, id))!.revokedAt).toBeNull();
    const revoked = await owner.post(`/keys/live/${id}/revoke`);
    expect(revoked).toMatchObject({ status: 303, location: '/keys/live?done=revoked' });
    expect((await findKeyById(env.db, id))!.revokedAt).not.toBeNull();

    const confirmDelete = await owner.get(`/keys/live/${id}/delete`);
    expect(confirmDelete.body).toContain('Delete key “confirm me”');
    expect(confirmDelete.body).toContain('<dd>revoked</dd>');
    const deleted = await owner.post(`/keys/live/${id}/delete`);
    expect(deleted).toMatchObject({ status: 303, location: '/keys/live?done=deleted' });
    // The confirmation sent again (back button): sent where the first went, nothing more.
    expect(await owner.post(`/keys/live/${id}/delete`)).toMatchObject({ status: 303, location: '/keys/live?done=deleted&again=acted' });
    expect((await findKeyById(env.db, id))!.deletedAt).not.toBeNull();

    expect((await viewer.get(`/keys/live/${id}/revoke`)).status).toBe(403);
    const theirs = await keys.create({ account: 'forms-other', environment: 'live' });
    expect((await owner.get(`/keys/live/${theirs.id}/delete`)).status).toBe(404);
  });
});

describe('what the pages show', () => {
  it('shows a banner while the account is restricted and refuses to create or rotate keys, with 403', async () => {
    const { id } = await new KeyService(env.db, TEST_SECRET).create({ account, environment: 'test', name: 'while restricted' });
    await setRestricted(env.db, account, true);
    try {
      const page = await owner.get('/keys/test');
      expect(page.body).toContain('data-notice="restricted"');
      expect(page.body).toContain('This account is restricted.');
      expect(page.body).not.toContain('action="/keys/test"');
      expect((await owner.get('/audit')).body).toContain('data-notice="restricted"');
      const create = await owner.post('/keys/test', { name: 'refused', scopes: 'context' });
      expect(create.status).toBe(403);
      expect(alert(create)).toContain('ACCOUNT_RESTRICTED');
      expect(alert(create)).toContain('keys cannot be created or rotated');
      const rotate = await owner.post(`/keys/test/${id}/rotate`, { grace: '1h' }, asJson);
      expect(rotate.status).toBe(403);
      expect(JSON.parse(rotate.body).error.code).toBe('ACCOUNT_RESTRICTED');
      expect(await named('refused')).toHaveLength(0);
      expect((await findKeyById(env.db, id))!.expiresAt).toBeNull();
      // Taking access away stays possible.
      await owner.get(`/keys/test/${id}/revoke`);
      expect((await owner.post(`/keys/test/${id}/revoke`)).status).toBe(303);
    } finally {
      await setRestricted(env.db, account, false);
    }
    expect((await owner.get('/keys/test')).body).not.toContain('data-notice="restricted"');
  });

  it('has no rate-limit field for test keys, one for live keys', async () => {
    const test = await owner.get('/keys/test');
    expect(test.body).not.toContain('name="rateLimitRps"');
    expect(test.body).toContain('Test keys are free and have no rate limit.');
    expect((await owner.get('/keys/live')).body).toContain('name="rateLimitRps"');
  });

  it('serves an SVG favicon that every page links to', async () => {
    const anonymous = new DashboardClient(dashboard.url, '198.51.100.10');
    const icon = await anonymous.get('/assets/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toContain('image/svg+xml');
    expect(icon.body).toContain('<svg');
    for (const page of [await anonymous.get('/signin'), await owner.get('/keys/test')]) {
      expect(page.body).toContain('<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml" />');
    }
  });

  it('returns to the page asked for after signing in, and to the keys otherwise', async () => {
    await addUser(env.db, 'forms-acme', 'returner@forms.test', 'viewer');
    const browser = new DashboardClient(dashboard.url, '198.51.100.11');
    const asked = await browser.get('/traffic/live?window=24h');
    expect(asked).toMatchObject({ status: 303, location: '/signin?next=%2Ftraffic%2Flive%3Fwindow%3D24h' });
    const form = await browser.get(asked.location!);
    expect(form.body).toContain('name="next" value="/traffic/live?window=24h"');
    const signedIn = await browser.post('/signin', {
      email: 'returner@forms.test',
      password: 'a long enough password',
      next: '/traffic/live?window=24h',
    });
    expect(signedIn).toMatchObject({ status: 303, location: '/traffic/live?window=24h' });
    // Signed in already: the sign-in page sends on to the page asked for.
    expect(await browser.get('/signin?next=%2Faudit')).toMatchObject({ status: 303, location: '/audit' });
    // The default landing page needs no `next`.
    expect((await new DashboardClient(dashboard.url, '198.51.100.12').get('/keys/test')).location).toBe('/signin');
  });

  it.each(['//evil.example/x', 'https://evil.example/', '/\\evil.example', '\\\\evil.example', '/\t/evil.example', 'javascript:alert(1)'])(
    'refuses to return to %s after signing in',
    async (next) => {
      const browser = new DashboardClient(dashboard.url, '198.51.100.13');
      const form = await browser.get(`/signin?next=${encodeURIComponent(next)}`);
      expect(form.body).not.toContain('name="next"');
      const signedIn = await browser.post('/signin', { email: 'viewer@forms.test', password: 'a long enough password', next });
      expect(signedIn).toMatchObject({ status: 303, location: '/keys/test' });
    },
  );

  it('keeps the signed-in layout on a 404 of a signed-in user, and the plain one for visitors', async () => {
    const signedIn = await owner.get('/no/such/page');
    expect(signedIn.status).toBe(404);
    expect(signedIn.body).toContain('<nav aria-label="Main">');
    expect(signedIn.body).toContain('owner@forms.test');
    expect(signedIn.body).toContain('No page at GET /no/such/page');
    const anonymous = await new DashboardClient(dashboard.url, '198.51.100.14').get('/no/such/page');
    expect(anonymous.status).toBe(404);
    expect(anonymous.body).not.toContain('<nav aria-label="Main">');
  });

  it('says "No requests in this period" instead of bare charts, with UTC captions', async () => {
    const page = await owner.get('/traffic/test?window=24h');
    expect(page.status).toBe(200);
    expect(page.body).toContain('No requests in this period');
    expect(page.body).not.toContain('data-chart="status"');
    expect(page.body).toContain('Requests per hour by status class (UTC)');
  });
});
