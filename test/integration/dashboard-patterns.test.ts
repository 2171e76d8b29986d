import { listAudit } from '../../shared/audit/audit.repository';
import { findAccount } from '../../shared/accounts/account.repository';
import { KeyService } from '../../shared/credentials/key.service';
import { listAnomalies, recordFinding } from '../../shared/traffic/patterns/anomaly.repository';
import { addUser, DashboardClient, spawnDashboard, type PageResponse } from '../support/dashboard';
import { stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/** Unusual patterns: listed open first, acknowledged by owners only, with CSRF and an audit entry. */
let env: TestEnv;
let dashboard: Spawned & { url: string };
let owner: DashboardClient;
let viewer: DashboardClient;
let acme: string;
let keyId: string;

const json = { Accept: 'application/json' };
/** The page's markup with whitespace between tags removed and runs of it made one space. */
const flat = (page: PageResponse) => page.body.replace(/\s+/g, ' ').replace(/> </g, '><').replace(/ >/g, '>');
const MIN = 60_000;
const errorOf = (page: PageResponse) => JSON.parse(page.body).error;
const badge = (page: PageResponse) => /data-badge="patterns">(\d+)/.exec(flat(page))?.[1];
const openIds = async (accountId: string) => (await listAnomalies(env.db, { accountId })).map((a) => a.id).sort();

async function finding(accountId: string, key: string, subject: string, at: number, reason: string) {
  await recordFinding(
    env.db,
    { accountId, environment: 'live', keyId: key },
    { rule: 'new-country', subject, reason, numbers: { country: subject, requests: 12 } },
    at,
    2 * 60 * MIN,
  );
}

beforeAll(async () => {
  env = await createTestEnv();
  const keys = new KeyService(env.db, TEST_SECRET);
  acme = await addUser(env.db, 'patterns-acme', 'owner@patterns.test', 'owner');
  await addUser(env.db, 'patterns-acme', 'viewer@patterns.test', 'viewer');
  keyId = (await keys.create({ account: acme, environment: 'live', name: 'checkout' })).id;
  const now = Date.now();
  await finding(acme, keyId, 'JP', now - 30 * MIN, 'First requests from Japan (JP) for this key: 12 in the last hour');
  await finding(acme, keyId, 'BR', now - 10 * MIN, 'First requests from Brazil (BR) for this key: 12 in the last hour');
  await finding(acme, keyId, 'DE', now - 5 * MIN, 'First requests from Germany (DE) for this key: 12 in the last hour');
  const otherKey = await keys.create({ account: 'patterns-other', environment: 'live' });
  const otherAccount = (await findAccount(env.db, 'patterns-other'))!.id;
  await finding(otherAccount, otherKey.id, 'FR', now, 'First requests from France (FR) for this key: 12 in the last hour');
  dashboard = await spawnDashboard(env.processEnv());
  owner = new DashboardClient(dashboard.url, '127.0.0.1');
  viewer = new DashboardClient(dashboard.url, '127.0.0.1');
  await owner.signIn('owner@patterns.test');
  await viewer.signIn('viewer@patterns.test');
});
afterAll(async () => {
  await stop(dashboard);
  await env.close();
});

describe('unusual patterns', () => {
  it('lists open patterns newest first with reason, numbers and times; the navigation badge counts them', async () => {
    const page = await viewer.get('/patterns');
    expect(page.status).toBe(200);
    expect(badge(page)).toBe('3');
    const order = ['Germany', 'Brazil', 'Japan'].map((country) => flat(page).indexOf(`First requests from ${country}`));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(flat(page)).toContain('<dt>requests</dt><dd>12</dd>');
    expect(flat(page)).not.toContain('France');
    expect(badge(await viewer.get('/audit'))).toBe('3');
  });

  it('shows viewers no button and refuses their forged acknowledgement with 403, changing nothing', async () => {
    const page = await viewer.get('/patterns');
    expect(flat(page)).not.toContain('Acknowledge</button>');
    const [id] = await openIds(acme);
    const res = await viewer.post(`/patterns/${id}/acknowledge`, {}, json);
    expect(res.status).toBe(403);
    expect(errorOf(res).code).toBe('FORBIDDEN');
    expect(await openIds(acme)).toHaveLength(3);
  });

  it('refuses a forged or missing CSRF token and a cross-site post, changing nothing', async () => {
    await owner.get('/patterns');
    const [id] = await openIds(acme);
    const forged = await owner.post(`/patterns/${id}/acknowledge`, { _csrf: 'f'.repeat(64) }, json);
    const missing = await owner.post(`/patterns/${id}/acknowledge`, { _csrf: null }, json);
    const crossSite = await owner.post(`/patterns/${id}/acknowledge`, {}, { ...json, 'Sec-Fetch-Site': 'cross-site' });
    for (const res of [forged, missing, crossSite]) {
      expect(res.status).toBe(403);
      expect(errorOf(res).code).toBe('FORBIDDEN');
    }
    expect(await openIds(acme)).toHaveLength(3);
    expect((await listAudit(env.db, acme, 10)).some((e) => e.action === 'pattern.acknowledge')).toBe(false);
  });

  it("treats another account's pattern, or a malformed id, as not found", async () => {
    await owner.get('/patterns');
    const [theirs] = await listAnomalies(env.db, { accountId: (await findAccount(env.db, 'patterns-other'))!.id });
    for (const id of [String(theirs!.id), 'abc', '99999999']) {
      const res = await owner.post(`/patterns/${id}/acknowledge`, {}, json);
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe('NOT_FOUND');
    }
    expect((await listAnomalies(env.db, { accountId: theirs!.accountId }))[0]!.acknowledgedAt).toBeNull();
  });

  it("re-renders the page with a refused acknowledgement's status and message", async () => {
    await viewer.get('/patterns');
    const [open] = await listAnomalies(env.db, { accountId: acme });
    const page = await viewer.post(`/patterns/${open!.id}/acknowledge`);
    expect(page.status).toBe(403);
    expect(flat(page)).toContain('Viewers can read this account but not change it');
    expect(flat(page)).toContain('<h1>Unusual patterns</h1>');
    await owner.get('/patterns');
    const missing = await owner.post(`/patterns/${open!.id}/acknowledge`, { _once: null });
    expect(missing.status).toBe(400);
    expect(flat(missing)).toContain('missing its one-time token');
    expect((await listAnomalies(env.db, { accountId: acme })).find((a) => a.id === open!.id)!.acknowledgedAt).toBeNull();
  });

  it('lets an owner acknowledge: it moves below the open ones, the badge drops and the audit log records it', async () => {
    await owner.get('/patterns');
    const newest = (await listAnomalies(env.db, { accountId: acme }))[0]!;
    expect(await owner.post(`/patterns/${newest.id}/acknowledge`)).toMatchObject({ status: 303, location: '/patterns?done=acknowledged' });
    // The same form sent again acts not again, and says so.
    const again = await owner.post(`/patterns/${newest.id}/acknowledge`);
    expect(again).toMatchObject({ status: 303, location: '/patterns?done=acknowledged&again=acted' });
    expect(flat(await owner.get(again.location!))).toContain('This form was already sent');
    const page = await owner.get('/patterns?done=acknowledged');
    expect(flat(page)).toContain('Pattern acknowledged.');
    expect(badge(page)).toBe('2');
    expect(flat(page).indexOf('First requests from Germany')).toBeGreaterThan(flat(page).indexOf('First requests from Japan'));
    expect(flat(page)).toContain('by owner@patterns.test');
    expect(await listAudit(env.db, acme, 1)).toEqual([
      expect.objectContaining({ action: 'pattern.acknowledge', actor: 'owner@patterns.test', keyId, environment: 'live' }),
    ]);
    // From a fresh page, acknowledging twice keeps the first.
    expect((await owner.post(`/patterns/${newest.id}/acknowledge`)).status).toBe(303);
    expect((await listAudit(env.db, acme, 10)).filter((e) => e.action === 'pattern.acknowledge')).toHaveLength(1);
    expect(flat(await owner.get('/audit'))).toContain('Acknowledged an unusual pattern');
  });
});
