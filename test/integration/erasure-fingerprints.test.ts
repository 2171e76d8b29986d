import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { eventsIdle, eventsQueues } from '../support/ledger';

/**
 * Erasure removes the user's outcomes, and with them their fingerprints in Redis — of outcomes
 * applied and of those accepted but not yet applied — so an earlier requestId of the erased user
 * takes other signals again (202, not 409 OUTCOME_CONFLICT); the worker then drops it, as it
 * does any outcome of a user erased after its decision.
 */
let h: Harness;
let key: string;
beforeAll(async () => {
  h = await startHarness();
  key = await h.key('erasure-prints', 'test');
});
afterAll(() => h.close());

const context = async (userId: string) =>
  (await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 'Sort the mail', complexity: 'low' })).body.requestId as string;
const outcome = (requestId: string, started: boolean) => h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started });
const erase = (userId: string) => h.http().delete(`/v1/profile/${userId}`).set(bearer(key));
const profile = (userId: string) => h.http().get(`/v1/profile/${userId}`).set(bearer(key));

it('forgets the fingerprints of outcomes accepted and not yet applied', async () => {
  // No worker yet: the outcome waits in the queue, its fingerprint in Redis.
  const pending = await context('prints-pending');
  expect((await outcome(pending, true)).status).toBe(202);
  expect((await outcome(pending, false)).status).toBe(409);
  expect((await erase('prints-pending')).status).toBe(204);
  expect((await outcome(pending, false)).status).toBe(202);
});

it('forgets the fingerprints of applied outcomes, and the worker applies none of them afterwards', async () => {
  h.startWorker();
  const applied = await context('prints-applied');
  expect((await outcome(applied, true)).status).toBe(202);
  await eventually(async () => (await profile('prints-applied')).body.interactionCount === 1);
  expect((await outcome(applied, false)).status).toBe(409);
  expect((await erase('prints-applied')).status).toBe(204);
  expect((await outcome(applied, false)).status).toBe(202);
  const queues = eventsQueues(h.env.redis, h.env.keys);
  try {
    await eventually(() => eventsIdle(queues));
  } finally {
    await queues.close();
  }
  // Neither user was revived by the outcomes posted after their erasure.
  for (const userId of ['prints-pending', 'prints-applied']) {
    expect((await profile(userId)).status).toBe(404);
    expect(await h.env.db.selectFrom('outcomes').select('request_id').where('user_id', '=', userId).execute()).toEqual([]);
  }
});
