import { freePort } from '../../scripts/local-services';
import { eventually, startHarness, type Harness } from '../support/harness';
import { sampleValue } from '../support/prometheus';

/** GET /healthz (alive) and GET /readyz (Redis and Postgres reachable) of the real API. */
describe('with Redis and Postgres reachable', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('answers /healthz 200 without authentication', async () => {
    const res = await h.http().get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('answers /readyz 200 with both checks ok once connected', async () => {
    // Not ready until its Redis connection is established: poll.
    const res = await eventually(async () => {
      const answer = await h.http().get('/readyz');
      return answer.status === 200 ? answer : null;
    });
    expect(res.body).toEqual({ status: 'ok', checks: { redis: 'ok', postgres: 'ok' } });
  });

  it.each(['/healthz', '/readyz', '/metrics'])(
    'answers another method on %s with 405 and OPTIONS with 204, both with Allow',
    async (path) => {
      const post = await h.http().post(path);
      expect(post.status).toBe(405);
      expect(post.headers.allow).toBe('GET, HEAD');
      expect(post.body.error.code).toBe('METHOD_NOT_ALLOWED');
      const options = await h.http().options(path);
      expect(options.status).toBe(204);
      expect(options.headers.allow).toBe('GET, HEAD');
    },
  );
});

describe.each([
  ['Redis', 'REDIS_URL', (port: number) => `redis://127.0.0.1:${port}`, { redis: 'unavailable', postgres: 'ok' }, 'redis'],
  [
    'Postgres',
    'DATABASE_URL',
    (port: number) => `postgres://cos:cos@127.0.0.1:${port}/cos`,
    { redis: 'ok', postgres: 'unavailable' },
    'postgres',
  ],
] as const)('with %s unreachable', (_name, variable, url, checks, dependency) => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ [variable]: url(await freePort()) });
  });
  afterAll(() => h.close());

  it('answers /readyz 503 naming the dependency that failed (and only that one, once the other is connected)', async () => {
    const res = await eventually(async () => {
      const answer = await h.http().get('/readyz');
      return answer.body.checks[dependency === 'redis' ? 'postgres' : 'redis'] === 'ok' ? answer : null;
    });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ status: 'degraded', checks });
  });

  it('still answers /healthz 200: the process is alive, restarting it would not help', async () => {
    const res = await h.http().get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('reports the dependency as down in /metrics', async () => {
    const res = await h.http().get('/metrics');
    expect(res.status).toBe(200);
    expect(sampleValue(res.text, 'cos_dependency_up', { dependency })).toBe(0);
  });
});
