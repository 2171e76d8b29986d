import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { readRequestIdClaims } from '../../shared/keys/request-id';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';

/**
 * POST /v1/outcome claims the requestId in Redis, then enqueues the job; when the enqueue fails
 * after the claim succeeded, the claim and the pending mark must go, or the client's retry would
 * be refused (409) for an outcome never acknowledged. Here Redis itself refuses the enqueue: the
 * API connects as a Redis ACL user whose access to the queue's keys is withdrawn for one request,
 * while the claim's keys stay writable.
 */
const user = `cos-rollback-${randomBytes(4).toString('hex')}`;
const password = randomBytes(12).toString('hex');
let admin: Redis;
let h: Harness;
let key: string;

const asUser = (url: string) => {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = password;
  return parsed.toString();
};
const allowKeys = (...patterns: string[]) => admin.call('ACL', 'SETUSER', user, 'resetkeys', ...patterns.map((p) => `~${p}`));

beforeAll(async () => {
  admin = new Redis(process.env.COS_TEST_REDIS_URL!, { maxRetriesPerRequest: null });
  await admin.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
  h = await startHarness((env) => ({ REDIS_URL: asUser(env.redisUrl) }));
  key = await h.key('rollback', 'test');
  h.startWorker(undefined, { REDIS_URL: h.env.redisUrl });
});
afterAll(async () => {
  await h.close();
  await admin.call('ACL', 'DELUSER', user);
  admin.disconnect();
});

it('releases the claim of an outcome it could not enqueue: the retry, with other signals, is accepted and applied', async () => {
  const context = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'rollback-user', task: 't', complexity: 'low' });
  expect(context.status).toBe(200);
  const requestId: string = context.body.requestId;
  const claims = readRequestIdClaims(requestId)!;
  const fingerprintKey = h.env.keys.outcomeFingerprint(requestId, claims.userHash);
  const pendingKey = h.env.keys.pendingOutcomes(claims, claims.userHash);

  await admin.call('ACL', 'LOG', 'RESET');
  await allowKeys(`${h.env.prefix}:v1:*`); // the claim's keys, not the queue's
  let failed;
  try {
    failed = await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started: true, satisfaction: 1 });
  } finally {
    await allowKeys('*');
  }
  expect(failed.status).toBeGreaterThanOrEqual(500);
  expect(failed.body.error.statusCode).toBe(failed.status);
  // Redis answered the claim and refused the enqueue, on a key of the queue…
  const denied = ((await admin.call('ACL', 'LOG')) as unknown[][])
    .map((entry) => Object.fromEntries(Array.from({ length: entry.length / 2 }, (_, i) => [entry[2 * i], entry[2 * i + 1]])))
    .filter((entry) => entry.username === user);
  expect(denied.length).toBeGreaterThan(0);
  const userQueue = h.env.keys.queuePrefixes[h.env.keys.queuePartition(claims.userHash)]!;
  expect(denied.every((entry) => entry.reason === 'key' && String(entry.object).startsWith(`${userQueue}:`))).toBe(true);
  // …and the claim and the pending mark were taken back.
  expect(await h.env.redis.exists(fingerprintKey)).toBe(0);
  expect(await h.env.redis.zcard(pendingKey)).toBe(0);

  const retry = await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started: false });
  expect(retry.status).toBe(202);
  await eventually(async () => (await h.http().get('/v1/profile/rollback-user').set(bearer(key))).body.interactionCount === 1);
  const row = await h.env.db.selectFrom('outcomes').select('fields').where('request_id', '=', requestId).executeTakeFirstOrThrow();
  expect(row.fields).toMatchObject({ started: false });
});
