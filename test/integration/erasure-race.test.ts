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

it('never revives a user erased while its outcome is being applied', async () => {
  const users = Array.from({ length: 150 }, (_, i) => `er-${i}`);
  await Promise.all(
    users.map(async (userId, i) => {
      const rid = (await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' })).body.requestId;
      expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId: rid, started: true })).status).toBe(202);
      await new Promise((r) => setTimeout(r, i % 7));
      expect((await h.http().delete(`/v1/profile/${userId}`).set(bearer(key))).status).toBe(204);
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
