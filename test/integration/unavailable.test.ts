import { freePort } from '../../scripts/local-services';
import { createLogger } from '../../shared/logger/logger';
import { capture } from '../support/cli';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { buildCarriedDecision } from '../support/request-ids';

let h: Harness;
let key: string;
const log = capture();
beforeAll(async () => {
  h = await startHarness({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, { logger: createLogger('warn', 'test', log.stream) });
  key = await h.key('no-redis', 'test');
});
afterAll(() => h.close());

/**
 * On one node the dead port refuses connections and each command fails at once. A cluster client
 * that never reached a seed holds its commands instead (it waits for the cluster), so there the
 * request deadline answers: the same 503, after the deadline, with its own message.
 */
const clusterHolds = () => h.env.clusterNodes !== undefined;
const DEADLINE_MESSAGE = 'The request did not complete within its deadline; retry shortly';

describe('Redis unreachable', () => {
  it('answers context with 503 SERVICE_UNAVAILABLE and Retry-After', async () => {
    const res = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'u', task: 't', complexity: 'low' });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('never answers 202 for an outcome it could not enqueue', async () => {
    const { issueRequestId } = await import('../../shared/ids/request-id');
    const { findAccount } = await import('../../shared/accounts/account.repository');
    const { TEST_SECRET } = await import('../support/test-env');
    const account = (await findAccount(h.env.db, 'no-redis'))!;
    const requestId = issueRequestId(
      { accountId: account.id, environment: 'test', issuedAt: Date.now(), userHash: '00'.repeat(8), decision: buildCarriedDecision() },
      TEST_SECRET,
    );
    const res = await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started: true });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('fails closed for a live key: 503 from the rate limiter, before any error of the body', async () => {
    const live = (await h.keys.create({ account: 'no-redis-live', environment: 'live' })).key;
    const badBody = (k: string) => h.http().post('/v1/context').set(bearer(k)).set('Content-Type', 'application/json').send('{bad');
    const res = await badBody(live);
    expect(res.status).toBe(503);
    const message = clusterHolds() ? DEADLINE_MESSAGE : 'The rate limiter is unavailable; retry shortly';
    expect(res.body).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message,
        statusCode: 503,
        traceId: res.headers['x-request-id'],
        docUrl: '/docs#error-service_unavailable',
      },
    });
    expect(res.headers['retry-after']).toBe('1');
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    // A test key skips the limiter, so the same request reaches the body check.
    expect((await badBody(key)).status).toBe(400);
    // A valid context call checks the limit with its profile read: the same answer.
    const valid = await h.http().post('/v1/context').set(bearer(live)).send({ userId: 'u', task: 't', complexity: 'low' });
    expect(valid.status).toBe(503);
    expect(valid.body.error.message).toBe(message);
  });

  it('still answers a live 403 when metering it fails: no rate-limit headers; the outage logged once, not the failure', async () => {
    const contextOnly = (await h.keys.create({ account: 'no-redis-live', environment: 'live', scopes: ['context'] })).key;
    const res = await h.http().get('/v1/profile/someone').set(bearer(contextOnly));
    // The refusal is metered before it is answered: where Redis holds the command, the deadline answers first.
    expect(res.status).toBe(clusterHolds() ? 503 : 403);
    expect(res.body.error.code).toBe(clusterHolds() ? 'SERVICE_UNAVAILABLE' : 'FORBIDDEN');
    expect(Object.keys(res.headers).filter((name) => name.startsWith('x-ratelimit'))).toEqual([]);
    const lines = () =>
      log
        .text()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { level: number; msg: string });
    await eventually(async () => lines().some((line) => line.msg.startsWith('redis unavailable')));
    expect(lines().filter((line) => line.msg.startsWith('redis unavailable'))).toHaveLength(1);
    expect(lines().map((line) => line.msg)).not.toContain('usage metering failed');
  });
});
