import { listAudit } from '../../shared/dashboard/audit.repository';
import { findKeyById, listKeys } from '../../shared/keys/key.repository';
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
  const page = await owner.post(`/keys/${env}`, { name, scopes: ['context', 'profile'], rateLimitRps: '25' });
  expect(page.status).toBe(201);
  const key = shownKey(page)!;
  const record = (await listKeys(h.env.db, acme)).find((k) => k.name === name)!;
  return { key, id: record.id };
}

describe('dashboard keys', () => {
  it('creates a key shown once, which the API accepts; the list shows its last 4 characters, scopes and rate limit', async () => {
    const { key, id } = await createKey('checkout');
    expect(key).toMatch(/^cos_sk_test_[0-9A-Za-z]{40}$/);
    expect(await apiStatus(key)).toBe(404);
    const page = await owner.get('/keys/test');
    expect(page.body).not.toContain(key);
    expect(page.body).toContain(`…${key.slice(-4)}`);
    expect(page.body).toContain('context, profile');
    expect(page.body).toContain('25/s');
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
    expect(audit.body.indexOf('Revoked a key')).toBeLessThan(audit.body.indexOf('Created a key'));
  });

  it('rotates a key: the new one is shown, the old one is "rotating out until" and both work', async () => {
    const { key, id } = await createKey('rotating');
    const page = await owner.post(`/keys/test/${id}/rotate`, { grace: '1h' });
    expect(page.status).toBe(201);
    const next = shownKey(page)!;
    expect(next).not.toBe(key);
    expect(page.body).toContain('rotating out until');
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
    const bad = await owner.post('/keys/test', { name: 'n'.repeat(101), scopes: 'admin', rateLimitRps: '-3' }, asJson);
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

  it('keeps live and test keys on their own pages', async () => {
    await createKey('live one', 'live');
    expect((await owner.get('/keys/live')).body).toContain('live one');
    expect((await owner.get('/keys/test')).body).not.toContain('live one');
  });
});
