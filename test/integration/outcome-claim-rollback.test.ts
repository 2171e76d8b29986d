import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { readRequestIdClaims } from '../../shared/ids/request-id';
import { CACHE_SCHEMA_VERSION } from '../../shared/redis/key-names';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { clusterNodeAddresses } from '../support/redis-proxy';

/**
 * POST /v1/outcome claims the requestId in Redis, then enqueues the job; when the enqueue fails
 * after the claim succeeded, the claim and the pending mark must go, or the client's retry would
 * be refused (409) for an outcome never acknowledged. Here Redis itself refuses the enqueue: the
 * API connects as a Redis ACL user whose access to the queue's keys is withdrawn for one request,
 * while the claim's keys stay writable. On a cluster the user is made on every node (ACLs are
 * per node) and the API signs in with REDIS_CLUSTER_USERNAME / REDIS_CLUSTER_PASSWORD.
 */
const user = `cos-rollback-${randomBytes(4).toString('hex')}`;
const password = randomBytes(12).toString('hex');
/** A connection to every Redis node (one, or each node of the cluster). */
let admins: Redis[];
const onEvery = (...args: Array<string | number>) => Promise.all(admins.map((admin) => admin.call(args[0] as string, ...args.slice(1))));
let h: Harness;
let key: string;

const asUser = (url: string) => {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = password;
  return parsed.toString();
};
const allowKeys = (...patterns: string[]) => onEvery('ACL', 'SETUSER', user, 'resetkeys', ...patterns.map((p) => `~${p}`));

beforeAll(async () => {
  const cluster = process.env.COS_TEST_REDIS_MODE === 'cluster' ? process.env.COS_TEST_REDIS_CLUSTER_NODES! : undefined;
  const nodes = cluster ? await clusterNodeAddresses(cluster.split(',')[0]!) : [new URL(process.env.COS_TEST_REDIS_URL!).host];
  admins = nodes.map((node) => new Redis(Number(node.split(':')[1]), node.split(':')[0]!, { maxRetriesPerRequest: null }));
  await onEvery('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
  h = await startHarness((env): Record<string, string> =>
    env.clusterNodes ? { REDIS_CLUSTER_USERNAME: user, REDIS_CLUSTER_PASSWORD: password } : { REDIS_URL: asUser(env.redisUrl) },
  );
  key = await h.key('rollback', 'test');
  // The worker as the default user (an empty variable counts as unset).
  h.startWorker(undefined, h.env.clusterNodes ? { REDIS_CLUSTER_USERNAME: '', REDIS_CLUSTER_PASSWORD: '' } : { REDIS_URL: h.env.redisUrl });
});
afterAll(async () => {
  await h.close();
  await onEvery('ACL', 'DELUSER', user);
  for (const admin of admins) admin.disconnect();
});

it('releases the claim of an outcome it could not enqueue: the retry, with other signals, is accepted and applied', async () => {
  const context = await h.http().post('/v1/context').set(bearer(key)).send({ userId: 'rollback-user', task: 't', complexity: 'low' });
  expect(context.status).toBe(200);
  const requestId: string = context.body.requestId;
  const claims = readRequestIdClaims(requestId)!;
  const fingerprintKey = h.env.keys.outcomeFingerprint({ requestId, userHash: claims.userHash });
  const pendingKey = h.env.keys.pendingOutcomes(claims, claims.userHash);

  await onEvery('ACL', 'LOG', 'RESET');
  await allowKeys(`${h.env.prefix}:${CACHE_SCHEMA_VERSION}:*`); // the claim's keys, not the queue's
  let failed;
  try {
    failed = await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started: true, satisfaction: 1 });
  } finally {
    await allowKeys('*');
  }
  expect(failed.status).toBeGreaterThanOrEqual(500);
  expect(failed.body.error.statusCode).toBe(failed.status);
  // Redis answered the claim and refused the enqueue, on a key of the queue…
  const denied = ((await onEvery('ACL', 'LOG')) as unknown[][][])
    .flat()
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
