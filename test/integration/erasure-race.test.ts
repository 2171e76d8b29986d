import { sql } from 'kysely';
import { JOBS } from '../../shared/jobs/catalog';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { eventsIdle, eventsQueues } from '../support/ledger';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('erasure-race', 'test');
  h.startWorker();
  h.startWorker();
});
afterAll(() => h.close());

/**
 * What a client does with 503 SERVICE_UNAVAILABLE, as the SDK does: retry with a growing,
 * jittered wait. 150 erasures at once, each waiting for its user's lock behind a batch, can
 * outlast a request's deadline; retrying all together after a fixed pause would meet the same
 * crowd again.
 */
async function withRetry(send: () => Promise<{ status: number; body: any }>): Promise<{ status: number; body: any }> {
  for (let attempt = 1; ; attempt++) {
    const res = await send();
    if (res.status !== 503 || attempt === 10) return res;
    await new Promise((r) => setTimeout(r, Math.min(4000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2)));
  }
}

it('never revives a user erased while its outcome is being applied', async () => {
  const users = Array.from({ length: 150 }, (_, i) => `er-${i}`);
  await Promise.all(
    users.map(async (userId, i) => {
      const context = await withRetry(() => h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' }));
      const rid = context.body.requestId;
      expect((await withRetry(() => h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: rid, started: true }))).status).toBe(
        202,
      );
      // Erasures land 0–6 ms after their outcome: before, during and after the batch applying it.
      await new Promise((r) => setTimeout(r, i % 7));
      expect((await withRetry(() => h.http().delete(`/v1/profile/${userId}`).set(bearer(key)))).status).toBe(204);
    }),
  );
  // Every queued event settled: applied (then erased) or dropped for the erasure.
  const queue = eventsQueues(h.env.redis, h.env.keys);
  await eventually(() => eventsIdle(queue));
  const completed = await queue.getJobs(['completed']);
  await queue.close();
  const settled = (name: 'decisions' | 'outcomes') =>
    new Set(
      completed
        .filter((job) => job.name === name)
        .flatMap((job) =>
          name === 'decisions'
            ? JOBS.decisions.schema.parse(job.data).decisions.map((d) => d.requestId)
            : JOBS.outcomes.schema.parse(job.data).outcomes.map((o) => o.requestId),
        ),
    ).size;
  expect({ decisions: settled('decisions'), outcomes: settled('outcomes') }).toEqual({ decisions: users.length, outcomes: users.length });
  const left = await sql<{ user_id: string }>`
    select user_id from profiles where user_id like 'er-%'
    union select user_id from outcomes where user_id like 'er-%'
    union select user_id from decisions where user_id like 'er-%'
    union select user_id from profile_versions where user_id like 'er-%'`.execute(h.env.db);
  expect(left.rows).toEqual([]);
  for (const userId of users.slice(0, 20)) expect((await h.http().get(`/v1/profile/${userId}`).set(bearer(key))).status).toBe(404);
}, 60_000);
