import { MIN_LEASE } from '../../shared/limits/admission-leases';
import { utcMonth } from '../../shared/util/calendar';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { parseSamples, sampleValue } from '../support/prometheus';

/** GET /metrics of the real API (no ADMIN_TOKEN configured: open). */
let h: Harness;
let key: string;
let now: number | null = null;
const clock = () => now ?? Date.now();
beforeAll(async () => {
  h = await startHarness({}, { clock });
  key = await h.key('metrics', 'test');
});
afterAll(() => h.close());
afterEach(() => {
  now = null;
});

async function scrape(): Promise<string> {
  const res = await h.http().get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
}

/** A labelled counter's values, one per label value, from a fresh scrape. */
async function counterByLabel<V extends string>(name: string, label: string, values: readonly V[]): Promise<Record<V, number>> {
  const text = await scrape();
  return Object.fromEntries(values.map((value) => [value, sampleValue(text, name, { [label]: value })!])) as Record<V, number>;
}

const requests = (text: string, route: string, status: number) =>
  sampleValue(text, 'cos_http_request_duration_seconds_count', { route, status_code: String(status) }) ?? 0;

const context = (userId: string, k = key) => h.http().post('/v1/context').set(bearer(k)).send({ userId, task: 'Plan', complexity: 'low' });

describe('GET /metrics (api)', () => {
  it('times each request once under its route name and status code, never under the raw path', async () => {
    const before = await scrape();
    expect((await context('metrics-route')).status).toBe(200);
    expect((await context('metrics-route')).status).toBe(200);
    expect((await h.http().post('/v1/context').send({})).status).toBe(401);
    expect((await h.http().get('/v1/profile/metrics-nobody').set(bearer(key))).status).toBe(404);
    expect((await h.http().get('/v1/profile/metrics-nobody/versions').set(bearer(key))).status).toBe(404);
    expect((await h.http().get('/no/such/path')).status).toBe(404);
    expect((await h.http().patch('/v1/context')).status).toBe(405);

    const expected: Array<[string, number, number]> = [
      ['context', 200, 2],
      ['context', 401, 1],
      ['profile.get', 404, 1],
      ['profile.versions', 404, 1],
      ['unmatched', 404, 1],
      ['unmatched', 405, 1],
    ];
    // Each request is observed when its response has been sent: poll for the last one.
    const after = await eventually(async () => {
      const text = await scrape();
      return expected.every(([route, status, n]) => requests(text, route, status) - requests(before, route, status) === n) ? text : null;
    });
    const routes = new Set(parseSamples(after).flatMap((s) => (s.labels.route === undefined ? [] : [s.labels.route])));
    expect([...routes].every((route) => /^[a-z.]+$/.test(route))).toBe(true);
    expect(after).not.toContain('metrics-nobody');
    expect(after).not.toContain('/v1/');
    // Buckets are cumulative and end with every observation in +Inf.
    const inf = sampleValue(after, 'cos_http_request_duration_seconds_bucket', { route: 'context', status_code: '200', le: '+Inf' });
    expect(inf).toBe(requests(after, 'context', 200));
    expect(sampleValue(after, 'cos_http_request_duration_seconds_sum', { route: 'context', status_code: '200' })).toBeGreaterThan(0);
  });

  it('counts profile cache misses and hits of the cache-first profile reads', async () => {
    const read = () => counterByLabel('cos_profile_cache_reads_total', 'result', ['hit', 'miss']);
    const before = await read();
    await context('metrics-cache'); // new user: not cached, not in Postgres, then cached
    await context('metrics-cache');
    expect((await h.http().get('/v1/profile/metrics-cache').set(bearer(key))).status).toBe(200);
    const after = await read();
    expect(after.miss - before.miss).toBe(1);
    expect(after.hit - before.hit).toBe(2);
  });

  it('counts accepted outcomes, first posts apart from retries of the same outcome', async () => {
    const read = () => counterByLabel('cos_outcomes_accepted_total', 'delivery', ['first', 'retry']);
    const before = await read();
    const requestId = (await context('metrics-outcome')).body.requestId as string;
    const post = () => h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started: true });
    expect((await post()).status).toBe(202);
    expect((await post()).status).toBe(202);
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started: false })).status).toBe(409);
    const after = await read();
    expect(after.first - before.first).toBe(1);
    expect(after.retry - before.retry).toBe(1);
  });

  it('reports the decisions answered and not yet logged, and none lost', async () => {
    await h.deps.decisions.sendNow();
    expect(sampleValue(await scrape(), 'cos_decisions_unsent')).toBe(0);
    const sentBefore = h.deps.decisions.batchesSent;
    expect((await context('metrics-decisions')).status).toBe(200);
    // Logged behind the answer: held in the API for its window (unless a slow run let it pass), then sent.
    const unsent = sampleValue(await scrape(), 'cos_decisions_unsent');
    expect(unsent === 1 || h.deps.decisions.batchesSent > sentBefore).toBe(true);
    await h.deps.decisions.sendNow();
    const text = await scrape();
    expect(sampleValue(text, 'cos_decisions_unsent')).toBe(0);
    expect(sampleValue(text, 'cos_decisions_unlogged_total')).toBe(0);
  });

  it('counts 429s by the limit that refused them: the per-second limit and the monthly quota', async () => {
    const read = () => counterByLabel('cos_rate_limit_rejections_total', 'scope', ['second', 'month']);
    const before = await read();
    const perSecond = await h.keys.create({ account: 'metrics-rps', environment: 'live', rateLimitRps: 1 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await h.http().get('/v1/profile/nobody').set(bearer(perSecond.key))).status);
    const refusedPerSecond = statuses.filter((status) => status === 429).length;
    expect(refusedPerSecond).toBeGreaterThan(0);

    const quota = await h.keys.create({ account: 'metrics-quota', environment: 'live' });
    now = Date.UTC(2026, 10, 15, 12);
    await h.env.redis.set(h.env.keys.monthlyCount({ accountId: quota.accountId, month: utcMonth(now) }), '100000');
    const refused = await h.http().get('/v1/profile/nobody').set(bearer(quota.key));
    expect(refused.status).toBe(429);
    expect(refused.body.error.details.scope).toBe('month');

    const after = await read();
    expect(after.second - before.second).toBe(refusedPerSecond);
    expect(after.month - before.month).toBe(1);
  });

  it('counts live admissions by the way they were let through: a key below the leases’ limit is checked one by one', async () => {
    const read = () => counterByLabel('cos_rate_limit_admissions_total', 'way', ['leased', 'checked']);
    const before = await read();
    const small = await h.keys.create({ account: 'metrics-admitted', environment: 'live', rateLimitRps: 100 });
    for (let i = 0; i < 20; i++) expect((await h.http().get('/v1/profile/nobody').set(bearer(small.key))).status).toBe(404);
    const busy = await h.keys.create({ account: 'metrics-leased', environment: 'live', rateLimitRps: 10_000 });
    // The clock stands still, so the 40 requests fall in one lease period however slow the machine:
    // the 16th asks for a lease and the rest use it.
    now = Date.now();
    for (let i = 0; i < 40; i++) expect((await h.http().get('/v1/profile/nobody').set(bearer(busy.key))).status).toBe(404);
    const after = await read();
    expect(after.leased - before.leased).toBe(40 - (MIN_LEASE - 1));
    expect(after.checked - before.checked).toBe(20 + (MIN_LEASE - 1));
  });

  it("reports Redis and Postgres as up, and Node's default process metrics", async () => {
    const text = await scrape();
    expect(sampleValue(text, 'cos_dependency_up', { dependency: 'redis' })).toBe(1);
    expect(sampleValue(text, 'cos_dependency_up', { dependency: 'postgres' })).toBe(1);
    expect(sampleValue(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });
});

describe('GET /metrics with ADMIN_TOKEN configured', () => {
  const token = 'metrics-admin-token-0123456789';
  let guarded: Harness;
  beforeAll(async () => {
    guarded = await startHarness({ ADMIN_TOKEN: token });
  });
  afterAll(() => guarded.close());

  it('requires the token as a Bearer token, with the error envelope otherwise', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789abc', `Basic ${token}`, `Bearer ${key}`]) {
      const req = guarded.http().get('/metrics');
      const res = await (authorization ? req.set('Authorization', authorization) : req);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        error: {
          code: 'UNAUTHORIZED',
          message: expect.stringContaining('ADMIN_TOKEN'),
          statusCode: 401,
          traceId: res.headers['x-request-id'],
          docUrl: '/docs#error-unauthorized',
        },
      });
    }
    const res = await guarded.http().get('/metrics').set('Authorization', `Bearer ${token}`);
    expect(res.status).toBe(200);
    expect(res.text).toContain('cos_http_request_duration_seconds');
  });

  it('leaves /healthz and /readyz open (probes carry no token)', async () => {
    expect((await guarded.http().get('/healthz')).status).toBe(200);
    expect((await guarded.http().get('/readyz')).status).toBe(200);
  });
});
