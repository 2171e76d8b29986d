import { freePort } from '../../scripts/local-services';
import { bearer, startHarness, type Harness } from '../support/harness';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
  key = await h.key('no-redis', 'test');
});
afterAll(() => h.close());

describe('Redis unreachable', () => {
  it('answers context with 503 SERVICE_UNAVAILABLE and Retry-After', async () => {
    const res = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'u', task: 't', complexity: 'low' });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBeDefined();
  });

  it('never answers 202 for an outcome it could not enqueue', async () => {
    const { issueRequestId } = await import('../../shared/keys/request-id');
    const { findAccount } = await import('../../shared/keys/account.repository');
    const { TEST_SECRET } = await import('../support/test-env');
    const account = (await findAccount(h.env.db, 'no-redis'))!;
    const requestId = issueRequestId(
      { accountId: account.id, environment: 'test', issuedAt: Date.now(), userHash: '00'.repeat(8), decisionBatch: '00'.repeat(8) },
      TEST_SECRET,
    );
    const res = await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started: true });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(res.headers['retry-after']).toBeDefined();
  });
});
