import { Cluster } from 'ioredis';
import { findAccount } from '../../shared/accounts/account.repository';
import { userHash } from '../../shared/ids/user-hash';
import { PENDING_OUTCOME_HORIZON_MS, SettledOutcomes } from '../../shared/profile/pending-outcomes.repository';
import type { Tenant } from '../../shared/domain/environment';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { TEST_SECRET } from '../support/test-env';

/** docs/adr/0008-read-your-outcomes.md: reads after an outcome reflect it, waiting briefly for the worker. */
let h: Harness;
let key: string;
let tenant: Tenant;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('ryo', 'test');
  tenant = { accountId: (await findAccount(h.env.db, 'ryo'))!.id, environment: 'test' };
});
afterAll(() => h.close());

const context = (userId: string) =>
  h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 'Tidy the desk', complexity: 'low' });
const outcome = (requestId: string, started = true) => h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started });
const pendingKey = (userId: string) => h.env.keys.pendingOutcomes(tenant, userHash(TEST_SECRET, tenant, userId));

/** Runs a read and returns how its waits for pending outcomes ended (the loader's counters). */
async function waitsOf<T>(read: () => Promise<T>): Promise<{ value: T; settled: number; timedOut: number }> {
  const before = { ...h.deps.loader.waits };
  const value = await read();
  const after = h.deps.loader.waits;
  return { value, settled: after.settled - before.settled, timedOut: after.timedOut - before.timedOut };
}

describe('reads after an outcome (no worker running)', () => {
  it('wait for the outcome until OUTCOME_WAIT_MS has passed, then answer from the profile as it is', async () => {
    const first = await context('ryo-stalled');
    expect((await outcome(first.body.requestId)).status).toBe(202);
    expect(await h.env.redis.zcard(pendingKey('ryo-stalled'))).toBe(1);
    const { value: next, settled, timedOut } = await waitsOf(() => context('ryo-stalled'));
    expect(next.status).toBe(200);
    expect(next.body.metadata.interactionCount).toBe(0);
    expect({ settled, timedOut }).toEqual({ settled: 0, timedOut: 1 });
    expect(await h.env.redis.zcard(pendingKey('ryo-stalled'))).toBe(1); // still pending: nothing settled it
  });

  it('never wait on an outcome accepted longer ago than the horizon (being retried, or no worker)', async () => {
    await h.env.redis.zadd(pendingKey('ryo-old'), Date.now() - PENDING_OUTCOME_HORIZON_MS - 1000, 'req_old');
    const { value, settled, timedOut } = await waitsOf(() => context('ryo-old'));
    expect(value.status).toBe(200);
    expect({ settled, timedOut }).toEqual({ settled: 0, timedOut: 0 });
  });
});

describe('reads after an outcome (worker running)', () => {
  // The guarantee is for a running worker: wait until it is connected and taking jobs, so its
  // start-up (which can exceed OUTCOME_WAIT_MS on a busy machine) is not timed as a read's wait.
  beforeAll(async () => {
    const worker = h.startWorker();
    await Promise.all([worker.ready, worker.joined]);
  });

  it('reflect every outcome posted before them: the next context call and GET /v1/profile', async () => {
    let requestId = (await context('ryo-loop')).body.requestId as string;
    for (let n = 1; n <= 8; n++) {
      expect((await outcome(requestId, n % 2 === 0)).status).toBe(202);
      const next = await context('ryo-loop');
      expect(next.body.metadata.interactionCount).toBe(n);
      const profile = await h.http().get('/v1/profile/ryo-loop').set(bearer(key));
      expect(profile.body.interactionCount).toBe(n);
      requestId = next.body.requestId;
    }
    expect(await h.env.redis.zcard(pendingKey('ryo-loop'))).toBe(0);
  });

  it('see an outcome that waited for a worker once one runs, and its mark is gone', async () => {
    await eventually(async () => (await context('ryo-stalled')).body.metadata.interactionCount === 1);
    expect(await h.env.redis.zcard(pendingKey('ryo-stalled'))).toBe(0);
  });

  it('do not wait when the user has nothing pending, and a retried outcome adds no mark', async () => {
    const { body } = await context('ryo-retry');
    expect((await outcome(body.requestId)).status).toBe(202);
    await eventually(async () => (await h.env.redis.zcard(pendingKey('ryo-retry'))) === 0);
    expect((await outcome(body.requestId)).status).toBe(202);
    expect(await h.env.redis.zcard(pendingKey('ryo-retry'))).toBe(0);
    const { settled, timedOut } = await waitsOf(() => context('ryo-retry'));
    expect({ settled, timedOut }).toEqual({ settled: 0, timedOut: 0 });
  });
});

describe('settlement notices', () => {
  it('wake a read waiting on the settled user, and only that one', async () => {
    // A cluster counts each node's subscribers on that node.
    const nodes = h.env.redis instanceof Cluster ? h.env.redis.nodes() : [h.env.redis];
    const subscribers = async () => {
      const counts = await Promise.all(nodes.map((node) => node.call('PUBSUB', 'NUMSUB', h.env.keys.outcomesSettled)));
      return counts.reduce((sum: number, reply) => sum + Number((reply as [string, number])[1]), 0);
    };
    const before = await subscribers();
    const settled = new SettledOutcomes(h.env.redis.duplicate(), h.env.keys);
    try {
      await eventually(async () => (await subscribers()) > before);
      // Wake-ups are counted, not timed: notices are handled in the order they arrive, so once a
      // later notice (for key-c) has woken its reader, key-b's reader would have been woken
      // already had the first notice reached it. The waits outlast the test's own time-out, so a
      // reader that is never woken fails the test instead of resolving.
      const woken: string[] = [];
      const wakeOf = (key: string) =>
        settled
          .listen(key)
          .wait(120_000)
          .then(() => void woken.push(key));
      const mine = wakeOf('key-a');
      const other = wakeOf('key-b');
      const marker = wakeOf('key-c');
      await h.env.redis.publish(h.env.keys.outcomesSettled, JSON.stringify(['key-a']));
      await mine;
      await h.env.redis.publish(h.env.keys.outcomesSettled, JSON.stringify(['key-c']));
      await marker;
      expect(woken).toEqual(['key-a', 'key-c']);
      await h.env.redis.publish(h.env.keys.outcomesSettled, JSON.stringify(['key-b']));
      await other;
      expect(woken).toEqual(['key-a', 'key-c', 'key-b']);
    } finally {
      settled.close();
    }
  });
});
