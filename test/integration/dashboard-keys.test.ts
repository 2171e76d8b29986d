import { listAudit } from '../../shared/audit/audit.repository';
import { findKeyById, listKeys } from '../../shared/credentials/key.repository';
import { addUser, DashboardClient, spawnDashboard, type PageResponse } from '../support/dashboard';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { stop, type Spawned } from '../support/processes';

let h: Harness;
let dashboard: Spawned & { url: string };
let acme: string;
let owner: DashboardClient;
let viewer: DashboardClient;

beforeAll(async () => {
  h = await startHarness();
  acme = await addUser(h.env.db, 'keys-acme', 'owner@keys.test', 'owner');
  await addUser(h.env.db, 'keys-acme', 'viewer@keys.test', 'viewer');
  dashboard = await spawnDashboard(h.env.processEnv({ TRUST_PROXY: 'loopback' }));
  owner = new DashboardClient(dashboard.url, '193.0.6.139');
  viewer = new DashboardClient(dashboard.url, '198.51.100.7');
  await owner.signIn('owner@keys.test');
  await viewer.signIn('viewer@keys.test');
});
afterAll(async () => {
  await stop(dashboard);
  await h.close();
});

const shownKey = (page: PageResponse) => /id="new-key" readonly value="(cos_sk_[a-z]+_[0-9A-Za-z]+)"/.exec(page.body)?.[1];
const apiStatus = async (key: string) => (await h.http().get('/v1/profile/someone').set(bearer(key))).status;
const keyCount = async () => (await listKeys(h.env.db, acme)).length;
const errorCode = (page: PageResponse) => JSON.parse(page.body).error.code;
const asJson = { Accept: 'application/json' };

async function createKey(name: string, env: 'test' | 'live' = 'test'): Promise<{ key: string; id: string }> {
  // Test keys have no rate limit; a live key's is at most the plan's (starter: 10 per second).
  const fields = { name, scopes: ['context', 'profile'], ...(env === 'live' ? { rateLimitRps: '7' } : {}) };
  const { posted, page } = await owner.submit(`/keys/${env}`, fields);
  expect(posted).toMatchObject({ status: 303, location: `/keys/${env}` });
  const key = shownKey(page!)!;
  const record = (await listKeys(h.env.db, acme)).find((k) => k.name === name)!;
  return { key, id: record.id };
}

describe('dashboard keys', () => {
  it('creates a key shown once, which the API accepts; the list shows its last 4 characters and scopes, and no rate limit for test keys', async () => {
    const { key, id } = await createKey('checkout');
    expect(key).toMatch(/^cos_sk_test_[0-9A-Za-z]{40}$/);
    expect(await apiStatus(key)).toBe(404);
    const page = await owner.get('/keys/test');
    expect(page.body).not.toContain(key);
    expect(page.body).toContain(`…${key.slice(-4)}`);
    expect(page.body).toContain('context, profile');
    expect(page.body).toContain('checkout');
    expect(page.body).not.toContain('Rate limit');
    expect(page.body).not.toContain('name="rateLimitRps"');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(await listAudit(h.env.db, acme, 1)).toEqual([
      expect.objectContaining({ action: 'key.create', keyId: id, environment: 'test', actor: 'owner@keys.test', country: 'NL' }),
    ]);
  });

  it('revokes a key: the API refuses it within 2 s, and the audit log shows it newest first', async () => {
    const { key, id } = await createKey('to revoke');
    expect(await apiStatus(key)).toBe(404);
    expect(await owner.post(`/keys/test/${id}/revoke`)).toMatchObject({ status: 303, location: '/keys/test?done=revoked' });
    await eventually(async () => (await apiStatus(key)) === 401, 2000);
    const audit = await owner.get('/audit');
    expect(audit.status).toBe(200);
    // In the table, not the filter's choices above it.
    const table = audit.body.slice(audit.body.indexOf('<tbody'));
    expect(table.indexOf('Revoked a key')).toBeLessThan(table.indexOf('Created a key'));
  });

  it('rotates a key: the new one is shown, the old one is "rotating out until" and both work', async () => {
    const { key, id } = await createKey('rotating');
    const { posted, page } = await owner.submit(`/keys/test/${id}/rotate`, { grace: '1h' });
    expect(posted).toMatchObject({ status: 303, location: '/keys/test' });
    const next = shownKey(page!)!;
    expect(next).not.toBe(key);
    expect(page!.body).toContain('rotating out until');
    const old = (await findKeyById(h.env.db, id))!;
    expect(Date.parse(old.expiresAt!) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(Date.parse(old.expiresAt!) - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(await apiStatus(key)).toBe(404);
    expect(await apiStatus(next)).toBe(404);
  });

  it('deletes a key: it leaves the list and the API refuses it', async () => {
    const { key, id } = await createKey('to delete');
    expect((await owner.post(`/keys/test/${id}/delete`)).status).toBe(303);
    await eventually(async () => (await apiStatus(key)) === 401, 2000);
    expect((await owner.get('/keys/test')).body).not.toContain('to delete');
  });

  it('lets a viewer read the keys but not change them: 403 and nothing changed', async () => {
    const { key, id } = await createKey('viewer target');
    const page = await viewer.get('/keys/test');
    expect(page.body).toContain('viewer target');
    expect(page.body).not.toContain('/revoke');
    expect(page.body).toContain('read-only access');
    const res = await viewer.post(`/keys/test/${id}/revoke`, {}, asJson);
    expect(res.status).toBe(403);
    expect(errorCode(res)).toBe('FORBIDDEN');
    expect((await viewer.post('/keys/test', { name: 'by viewer' }, asJson)).status).toBe(403);
    expect((await findKeyById(h.env.db, id))!.revokedAt).toBeNull();
    expect(await apiStatus(key)).toBe(404);
  });

  it("treats another account's key as not found and leaves it alone", async () => {
    const other = await h.keys.create({ account: 'keys-other', environment: 'test' });
    for (const action of ['revoke', 'delete', 'rotate']) {
      const res = await owner.post(`/keys/test/${other.id}/${action}`, {}, asJson);
      expect(res.status).toBe(404);
      expect(errorCode(res)).toBe('NOT_FOUND');
    }
    const record = (await findKeyById(h.env.db, other.id))!;
    expect(record).toMatchObject({ revokedAt: null, deletedAt: null, expiresAt: null });
    expect((await owner.get('/keys/test')).body).not.toContain(other.id);
  });

  it('refuses a forged or missing CSRF token and a cross-site request with 403, creating nothing', async () => {
    const before = await keyCount();
    const forged = await owner.post('/keys/test', { _csrf: 'f'.repeat(64), name: 'forged' }, asJson);
    const missing = await owner.post('/keys/test', { _csrf: null, name: 'missing' }, asJson);
    const crossOrigin = await owner.post('/keys/test', { name: 'cross' }, { ...asJson, Origin: 'https://evil.example' });
    const crossSite = await owner.post('/keys/test', { name: 'site' }, { ...asJson, 'Sec-Fetch-Site': 'cross-site' });
    for (const res of [forged, missing, crossOrigin, crossSite]) {
      expect(res.status).toBe(403);
      expect(errorCode(res)).toBe('FORBIDDEN');
    }
    expect(await keyCount()).toBe(before);
  });

  it('answers an oversized form 413 and a malformed one 400 naming the fields, creating nothing', async () => {
    const before = await keyCount();
    const big = await owner.post('/keys/test', { name: 'x'.repeat(5000) }, asJson);
    expect(big.status).toBe(413);
    expect(errorCode(big)).toBe('PAYLOAD_TOO_LARGE');
    const bad = await owner.post('/keys/live', { name: 'n'.repeat(101), scopes: 'admin', rateLimitRps: '-3' }, asJson);
    expect(bad.status).toBe(400);
    const body = JSON.parse(bad.body);
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details.fields.map((f: { field: string }) => f.field).sort()).toEqual(['name', 'rateLimitRps', 'scopes']);
    const page = await owner.post('/keys/test', { scopes: 'admin' });
    expect(page.status).toBe(400);
    expect(page.body).toContain('VALIDATION_ERROR');
    expect((await owner.post('/keys/prod', { name: 'x' }, asJson)).status).toBe(404);
    expect(await keyCount()).toBe(before);
  });

  it('keeps live and test keys on their own pages; a live key shows its rate limit', async () => {
    await createKey('live one', 'live');
    const live = await owner.get('/keys/live');
    expect(live.body).toContain('live one');
    expect(live.body).toContain('7/s');
    expect((await owner.get('/keys/test')).body).not.toContain('live one');
  });

  it('answers a path whose percent-encoding cannot be decoded 400, signed in or not, without an error in the log', async () => {
    for (const path of ['/keys/%E0%A4%A', '/keys/live/%E0%A4%A/revoke', '/traffic/%ZZ']) {
      expect((await owner.get(path)).status).toBe(400);
      expect((await new DashboardClient(dashboard.url, '198.51.100.77').get(path, asJson)).status).toBe(400);
    }
    const refused = await owner.post('/keys/live/%E0%A4%A/revoke', {}, asJson);
    expect(refused.status).toBe(400);
    expect(errorCode(refused)).toBe('VALIDATION_ERROR');
    expect(dashboard.output()).not.toMatch(/"level":50/);
  });
});

describe("the plan's limits in the dashboard", () => {
  let starter: DashboardClient;
  let account: string;
  beforeAll(async () => {
    account = await addUser(h.env.db, 'keys-plan', 'owner@plan.test', 'owner');
    starter = new DashboardClient(dashboard.url, '193.0.6.140');
    await starter.signIn('owner@plan.test');
  });
  const liveKeys = async () => (await listKeys(h.env.db, account)).filter((k) => k.environment === 'live');

  it("refuses a key's rate limit above the plan's and any rate limit on a test key, creating nothing", async () => {
    await starter.get('/keys/live');
    const above = await starter.post('/keys/live', { name: 'fast', scopes: 'context', rateLimitRps: '100000' }, asJson);
    expect(above.status).toBe(400);
    expect(JSON.parse(above.body).error).toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'The starter plan allows at most 10 requests per second per key',
      details: { fields: [{ field: 'rateLimitRps', message: expect.any(String) }] },
    });
    const onTest = await starter.post('/keys/test', { name: 'test fast', scopes: 'context', rateLimitRps: '5' }, asJson);
    expect(onTest.status).toBe(400);
    expect(await listKeys(h.env.db, account)).toEqual([]);
    const atPlan = await starter.submit('/keys/live', { name: 'at plan', scopes: 'context', rateLimitRps: '10' });
    expect(atPlan.posted.status).toBe(303);
    const key = shownKey(atPlan.page!)!;
    const res = await h.http().get('/v1/profile/someone').set(bearer(key));
    expect(res.headers['x-ratelimit-limit']).toBe('10');
  });

  it('creates at most 5 live keys on starter, also from 8 simultaneous forms, and says so on the page', async () => {
    await starter.get('/keys/live');
    const existing = (await liveKeys()).length;
    expect(existing).toBe(1);
    // Eight forms, each its own page (its own one-time token), sent at once.
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        starter.post('/keys/live', { name: `burst ${i}`, scopes: 'context', _once: `burst-${i}-${'x'.repeat(20)}` }, asJson),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((status) => status === 303)).toHaveLength(5 - existing);
    expect(statuses.filter((status) => status === 400)).toHaveLength(8 - (5 - existing));
    const refusal = JSON.parse(answers.find((a) => a.status === 400)!.body).error;
    expect(refusal.message).toContain('The starter plan allows 5 live keys at once');
    expect(await liveKeys()).toHaveLength(5);
    const page = await starter.get('/keys/live');
    expect(page.body).toContain('5 of 5 live keys in use');
    expect(page.body).toContain('as many live keys as its plan allows');
    // Test keys are free and not capped.
    for (let i = 0; i < 6; i++) expect((await starter.submit('/keys/test', { name: `t${i}`, scopes: 'context' })).posted.status).toBe(303);
    // A revoked key frees its place.
    const [first] = await liveKeys();
    expect((await starter.post(`/keys/live/${first!.id}/revoke`, {})).status).toBe(303);
    expect((await starter.post('/keys/live', { name: 'after revoke', scopes: 'context' })).status).toBe(303);
  });
});
