import { sql } from 'kysely';
import { bearer, startHarness, type Harness } from '../support/harness';

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('erasure-race', 'test');
  h.startWorker();
  h.startWorker();
});
afterAll(() => h.close());

/** What a client does with 503 SERVICE_UNAVAILABLE: retry after a moment. */
async function withRetry(send: () => Promise<{ status: number; body: any }>): Promise<{ status: number; body: any }> {
  for (let attempt = 1; ; attempt++) {
    const res = await send();
    if (res.status !== 503 || attempt === 5) return res;
    await new Promise((r) => setTimeout(r, 500));
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
      await new Promise((r) => setTimeout(r, i % 7));
      expect((await withRetry(() => h.http().delete(`/v1/profile/${userId}`).set(bearer(key)))).status).toBe(204);
    }),
  );
  // Let the workers drain whatever was still queued.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const counts = await h.env.redis.llen(`${h.env.keys.queuePrefix}:events:wait`);
    const active = await h.env.redis.llen(`${h.env.keys.queuePrefix}:events:active`);
    if ((counts === 0 && active === 0) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 500));
  const left = await sql<{ user_id: string }>`
    select user_id from profiles where user_id like 'er-%'
    union select user_id from outcomes where user_id like 'er-%'
    union select user_id from decisions where user_id like 'er-%'
    union select user_id from profile_versions where user_id like 'er-%'`.execute(h.env.db);
  expect(left.rows).toEqual([]);
  for (const userId of users.slice(0, 20)) expect((await h.http().get(`/v1/profile/${userId}`).set(bearer(key))).status).toBe(404);
}, 60_000);
