import { KeyService } from '../../shared/credentials/key.service';
import { addUser, DashboardClient, spawnDashboard, type PageResponse } from '../support/dashboard';
import { stop, type Spawned } from '../support/processes';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';
import { flushSeeded, seedMinute } from '../support/traffic';

/** The traffic and geography pages read what the worker flushed, scoped to the viewer's account. */
let env: TestEnv;
let dashboard: Spawned & { url: string };
let owner: DashboardClient;
let viewer: DashboardClient;
let keys: KeyService;
let checkout: string;
let batch: string;
let other: string;

const json = { Accept: 'application/json' };
/** The page's markup with whitespace between tags removed and runs of it made one space. */
const flat = (page: PageResponse) => page.body.replace(/\s+/g, ' ').replace(/> </g, '><').replace(/ >/g, '>');
const errorOf = (page: PageResponse) => JSON.parse(page.body).error;
const stat = (page: PageResponse, name: string) => new RegExp(`data-stat="${name}"><dt>[^<]*</dt><dd>([\\d,]+)</dd>`).exec(flat(page))?.[1];

beforeAll(async () => {
  env = await createTestEnv();
  keys = new KeyService(env.db, TEST_SECRET);
  await addUser(env.db, 'traffic-acme', 'owner@traffic.test', 'owner');
  await addUser(env.db, 'traffic-acme', 'viewer@traffic.test', 'viewer');
  checkout = (await keys.create({ account: 'traffic-acme', environment: 'live', name: 'checkout' })).id;
  batch = (await keys.create({ account: 'traffic-acme', environment: 'live', name: 'batch' })).id;
  other = (await keys.create({ account: 'traffic-other', environment: 'live', name: 'theirs' })).id;
  const now = Date.now();
  await seedMinute(env, checkout, now, {
    requests: { 'context:2xx': 6, 'outcome:2xx': 2, 'context:401': 1, 'context:429': 3 },
    latenciesMs: [2, 2, 3, 40],
    countries: { US: 9, GB: 3 },
  });
  await seedMinute(env, batch, now, { requests: { 'outcome:2xx': 5, 'outcome:403': 2 }, countries: { JP: 7 } });
  await seedMinute(env, other, now, { requests: { 'context:2xx': 1000 }, countries: { FR: 1000 } });
  await flushSeeded(env);
  dashboard = await spawnDashboard(env.processEnv());
  owner = new DashboardClient(dashboard.url, '127.0.0.1');
  viewer = new DashboardClient(dashboard.url, '127.0.0.1');
  await owner.signIn('owner@traffic.test');
  await viewer.signIn('viewer@traffic.test');
});
afterAll(async () => {
  await stop(dashboard);
  await env.close();
});

describe('traffic page', () => {
  it("adds up the account's live keys, with refusals, endpoints, chart data and month-to-date usage", async () => {
    const page = await viewer.get('/traffic/live?window=1h');
    expect(page.status).toBe(200);
    expect(stat(page, 'requests')).toBe('19');
    expect(stat(page, '401')).toBe('1');
    expect(stat(page, '403')).toBe('2');
    expect(stat(page, '429')).toBe('3');
    expect(flat(page)).toMatch(/<th scope="row" data-label="Endpoint">outcome<\/th><td data-label="2xx">7<\/td>/);
    const data = JSON.parse(/<script type="application\/json" id="chart-data">(.*?)<\/script>/s.exec(flat(page))![1]!);
    expect(data.x).toHaveLength(60);
    expect(data.charts.map((c: { id: string }) => c.id)).toEqual(['status', 'endpoints', 'refused', 'latency']);
    expect(flat(page)).toContain('/assets/uPlot.iife.min.js');
    // Quota usage counts admitted requests only: 8 of checkout's, 5 of batch's.
    expect(flat(page)).toMatch(/<th scope="row" data-label="Key">checkout …\w{4}<\/th>\s*<td data-label="Used">8 /);
    expect(flat(page)).toContain('Account (all live keys)');
    expect(flat(page)).not.toContain('1,000');
    // The quota is the account's, shown once however many live keys it has (not per key, not multiplied).
    expect(flat(page).match(/100,000/g)).toHaveLength(1);
    expect(flat(page)).toMatch(/Monthly quota of the account, all live keys together:\s*<strong>100,000 requests<\/strong>/);
    expect(flat(page)).not.toContain('200,000');
  });

  it("shows one key's traffic, and the test environment apart", async () => {
    const page = await owner.get(`/traffic/live?window=24h&key=${checkout}`);
    expect(stat(page, 'requests')).toBe('12');
    expect(flat(page)).not.toContain('data-label="Key">batch<');
    expect(stat(await owner.get('/traffic/test'), 'requests')).toBe('0');
  });

  it('answers a bad window 400 with the error envelope naming the field', async () => {
    const res = await owner.get('/traffic/live?window=7y', json);
    expect(res.status).toBe(400);
    expect(errorOf(res)).toMatchObject({ code: 'VALIDATION_ERROR', statusCode: 400, details: { fields: [{ field: 'window' }] } });
    expect((await owner.get('/geography/live?window=1w', json)).status).toBe(400);
  });

  it("treats another account's key, or a key of the other environment, as not found", async () => {
    for (const path of [`/traffic/live?key=${other}`, `/geography/live?key=${other}`, `/traffic/test?key=${checkout}`]) {
      const res = await owner.get(path, json);
      expect(res.status).toBe(404);
      expect(errorOf(res).code).toBe('NOT_FOUND');
    }
  });

  it('sends a visitor without a session to sign in, and back to the page afterwards', async () => {
    const anonymous = new DashboardClient(dashboard.url, '127.0.0.1');
    expect(await anonymous.get('/traffic/live')).toMatchObject({ status: 303, location: '/signin?next=%2Ftraffic%2Flive' });
    expect(await anonymous.get('/geography/live')).toMatchObject({ status: 303, location: '/signin?next=%2Fgeography%2Flive' });
  });

  it('shows the old and the new key side by side while a rotated-out key is in its grace period', async () => {
    const old = await keys.create({ account: 'traffic-acme', environment: 'live', name: 'web' });
    const rotated = await keys.rotate(old.id, 3_600_000);
    await seedMinute(env, old.id, Date.now(), { requests: { 'context:2xx': 4 } });
    await seedMinute(env, rotated.id, Date.now(), { requests: { 'context:2xx': 11 } });
    await flushSeeded(env);
    for (const keyId of [old.id, rotated.id]) {
      const page = await viewer.get(`/traffic/live?window=1h&key=${keyId}`);
      expect(flat(page)).toContain('Rotation in progress');
      expect(flat(page)).toMatch(/old: web …\w{4}<\/th><td data-label="Requests">4</);
      expect(flat(page)).toMatch(/new: web …\w{4}<\/th><td data-label="Requests">11</);
      expect(flat(page)).toContain('"id":"rotation"');
    }
    expect(flat(await viewer.get(`/traffic/live?key=${checkout}`))).not.toContain('Rotation in progress');
  });
});

describe('geography page', () => {
  it('shades each country on the map by its count, with a title, and lists the countries', async () => {
    const page = await viewer.get('/geography/live?window=1h');
    expect(page.status).toBe(200);
    expect(flat(page)).toMatch(/class="shade-5" data-country="840"><title>United States of America: 9 requests<\/title>/);
    expect(flat(page)).toMatch(/data-country="392"><title>Japan: 7 requests<\/title>/);
    expect(flat(page)).toMatch(/class="shade-0" data-country="250"><title>France: 0 requests<\/title>/);
    const rows = [
      ...flat(page).matchAll(
        /<th scope="row" data-label="Country">([^<]+)<\/th>\s*<td data-label="Code">(\w\w)<\/td>\s*<td data-label="Requests">(\d+)/g,
      ),
    ];
    expect(rows.map((r) => [r[1], r[2], r[3]])).toEqual([
      ['United States', 'US', '9'],
      ['Japan', 'JP', '7'],
      ['United Kingdom', 'GB', '3'],
    ]);
  });
});
