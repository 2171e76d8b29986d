import request from 'supertest';
import { createApp } from '../../api/app';
import { buildApiDependencies } from '../../api/dependencies';
import { loadApiConfig } from '../../shared/config/config';
import { KeyService } from '../../shared/credentials/key.service';
import { emptyPrior } from '../../shared/domain/engine/engine';
import { PopulationCache } from '../../shared/population/population-cache.repository';
import { createLogger } from '../../shared/logger/logger';
import { apiListener } from '../support/api-responses';
import { bearer } from '../support/harness';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy';
import { createTestEnv, TEST_SECRET, type TestEnv } from '../support/test-env';

/**
 * The hot-path budget: a cached context touches Redis once and Postgres never; its decision is
 * logged behind the answer, many decisions to one Redis call.
 */
let env: TestEnv;
let redisProxy: RedisProxy;
let pgProxy: CountingProxy;
let deps: ReturnType<typeof buildApiDependencies>;
let app: ReturnType<typeof createApp>['listener'];
let key: string;

beforeAll(async () => {
  env = await createTestEnv();
  redisProxy = await startRedisProxy(env);
  pgProxy = await startCountingProxy(env.databaseUrl);
  key = (await new KeyService(env.db, TEST_SECRET).create({ account: 'hot', environment: 'test' })).key;
  // A tenant with no population prior anywhere is looked up in Postgres about once a second in
  // the background; give this one a prior in Redis, as any tenant with outcomes has, so that a
  // slow run cannot count that lookup against the requests.
  const accountId = (await env.db.selectFrom('accounts').select('id').where('name', '=', 'hot').executeTakeFirstOrThrow()).id;
  await new PopulationCache(env.redis, env.keys).writeManyIfNewer([
    { tenant: { accountId, environment: 'test' }, population: { version: 1, prior: emptyPrior() } },
  ]);
  // The credential watermark poll is background work; park it so it cannot blur the count.
  const config = loadApiConfig(env.processEnv({ ...redisProxy.env, DATABASE_URL: pgProxy.url, KEY_REFRESH_INTERVAL: '1h' }));
  deps = buildApiDependencies(config, createLogger('silent', 'test'));
  app = apiListener(createApp(deps).listener);
  await deps.started; // the first key-change poll reads Postgres once, in the background
  // The dashboard's traffic counts go to Redis once a second, not per request: stop that timer
  // too, so that a slow run cannot count a send against the requests.
  await deps.traffic.close();
});
afterAll(async () => {
  await deps.close();
  await redisProxy.close();
  await pgProxy.close();
  await env.close();
});

/**
 * Commands of the requests: what background work sends on its own clock is left out — the
 * key-change stream's blocking read (once a second), the population prior's refresh (an HGET of
 * its version every 200 ms) and, on a cluster, the client's slot-map refresh.
 */
const BACKGROUND = new Set(['XREAD', 'XRANGE', 'XREVRANGE', 'CLUSTER', 'INFO', 'PING', 'HGET']);
const requestCommands = () => redisProxy.commands().filter((name) => !BACKGROUND.has(name));

const context = (userId: string) =>
  request(app).post('/v1/context').set(bearer(key)).send({ userId, task: 'Reply to emails', complexity: 'low' });

it('serves a cached profile with one Redis round trip and no Postgres query, logging decisions in batches', async () => {
  expect((await context('cached-user')).status).toBe(200); // miss: loads, caches, warms the key cache
  expect((await context('cached-user')).status).toBe(200);
  await deps.decisions.sendNow();
  redisProxy.reset();
  pgProxy.reset();
  const sentBefore = deps.decisions.batchesSent;
  const n = 20;
  // Concurrent calls, as under load: their decisions share batches.
  const answers = await Promise.all(Array.from({ length: n }, () => context('cached-user')));
  expect(answers.map((res) => res.status)).toEqual(Array(n).fill(200));
  await deps.decisions.sendNow();
  const batches = deps.decisions.batchesSent - sentBefore;
  expect(batches).toBeGreaterThanOrEqual(1);
  expect(batches).toBeLessThan(n);
  expect(pgProxy.writes()).toBe(0);
  // Commands as Redis reads them (a pipelined write counts each): one script per call, one per batch.
  expect(requestCommands()).toEqual(Array(n + batches).fill('EVALSHA'));
});

it('loads a profile from Postgres once on a cache miss, then serves it from the cache', async () => {
  await request(app).put('/v1/profile/stored-user').set(bearer(key)).send({ preferredFraming: 'purpose' });
  await env.redis.del(
    env.keys.profile(
      {
        accountId: (await env.db.selectFrom('accounts').select('id').where('name', '=', 'hot').executeTakeFirstOrThrow()).id,
        environment: 'test',
      },
      'stored-user',
    ),
  );
  pgProxy.reset();
  expect((await context('stored-user')).body.suggestedFraming).toBe('purpose');
  const afterMiss = pgProxy.writes();
  expect(afterMiss).toBeGreaterThan(0);
  expect((await context('stored-user')).body.suggestedFraming).toBe('purpose');
  expect(pgProxy.writes()).toBe(afterMiss);
});

it('records an outcome with two Redis round trips and no Postgres query', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 11; i++) ids.push((await context('outcome-user')).body.requestId);
  await deps.decisions.sendNow();
  // The first outcome on a Redis server that has not seen its scripts yet pays a NOSCRIPT
  // answer and a reload: steady state is what is counted.
  const warm = ids.shift();
  expect((await request(app).post('/v1/outcome').set(bearer(key)).send({ requestId: warm, started: true })).status).toBe(202);
  redisProxy.reset();
  pgProxy.reset();
  for (const requestId of ids) {
    expect((await request(app).post('/v1/outcome').set(bearer(key)).send({ requestId, started: true })).status).toBe(202);
  }
  expect(pgProxy.writes()).toBe(0);
  // The claim, then the job's enqueue: two scripts per outcome, however they are written.
  expect(requestCommands()).toEqual(Array(2 * ids.length).fill('EVALSHA'));
});

it("checks a live key's limit in the same Redis round trip as the profile read: one wait per cached context", async () => {
  const live = (await new KeyService(env.db, TEST_SECRET).create({ account: 'hot', environment: 'live', rateLimitRps: 1000 })).key;
  const liveContext = () =>
    request(app).post('/v1/context').set(bearer(live)).send({ userId: 'live-user', task: 'Reply', complexity: 'low' });
  // Warm: the user's profile, the key's credential, and the scripts on this Redis server.
  for (let i = 0; i < 2; i++) expect((await liveContext()).status).toBe(200);
  await deps.decisions.sendNow();
  redisProxy.reset();
  const sentBefore = deps.decisions.batchesSent;
  const n = 10;
  for (let i = 0; i < n; i++) {
    const res = await liveContext();
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-limit']).toBeDefined();
  }
  await deps.decisions.sendNow();
  // Each call is one command (the limiter's script with the profile read), plus the decision
  // batches. On a cluster the limiter's keys and the user's are in different slots: two commands
  // sent together, one wait.
  const perCall = env.clusterNodes ? 2 : 1;
  expect(requestCommands()).toEqual(Array(perCall * n + (deps.decisions.batchesSent - sentBefore)).fill('EVALSHA'));
});

it('takes an Idempotency-Key in the round trip of the first read: a keyed call costs one command more, storing its answer', async () => {
  const live = (await new KeyService(env.db, TEST_SECRET).create({ account: 'hot', environment: 'live', rateLimitRps: 1000 })).key;
  let n = 0;
  const keyed = (apiKey: string, path: string, body: object) =>
    request(app)
      .post(path)
      .set({ ...bearer(apiKey), 'Idempotency-Key': `hot-${++n}` })
      .send(body);
  const body = { userId: 'keyed-user', task: 'Reply', complexity: 'low' };
  // Warm: the user's profile, the keys' credentials, and the scripts on this Redis server.
  for (const apiKey of [key, live]) for (let i = 0; i < 2; i++) expect((await keyed(apiKey, '/v1/context', body)).status).toBe(200);
  // Outcomes for another user: a pending outcome makes its user's reads wait for the worker.
  const ids: string[] = [];
  for (let i = 0; i < 6; i++) ids.push((await keyed(key, '/v1/context', { ...body, userId: 'keyed-outcomes' })).body.requestId);
  expect((await keyed(key, '/v1/outcome', { requestId: ids.shift(), started: true })).status).toBe(202);
  await deps.decisions.sendNow();
  const calls = 5;
  const count = async (run: () => Promise<void>) => {
    redisProxy.reset();
    const sentBefore = deps.decisions.batchesSent;
    await run();
    await deps.decisions.sendNow();
    const commands = requestCommands();
    expect(new Set(commands)).toEqual(new Set(['EVALSHA']));
    return commands.length - (deps.decisions.batchesSent - sentBefore);
  };
  const contexts = (apiKey: string) => async () => {
    for (let i = 0; i < calls; i++) expect((await keyed(apiKey, '/v1/context', body)).status).toBe(200);
  };
  // The claim with the profile read, then the stored answer.
  expect(await count(contexts(key))).toBe(2 * calls);
  // A live key's limiter runs first in that script; on a cluster it is a command of its own (another slot).
  expect(await count(contexts(live))).toBe((env.clusterNodes ? 3 : 2) * calls);
  // The claim with the outcome's claim, the job's enqueue, then the stored answer.
  const outcomes = await count(async () => {
    for (const requestId of ids) expect((await keyed(key, '/v1/outcome', { requestId, started: true })).status).toBe(202);
  });
  expect(outcomes).toBe(3 * ids.length);
});

it('answers a cached user while Postgres hangs (connections open, nothing answered): the hot path never waits on it', async () => {
  expect((await context('hang-user')).status).toBe(200); // cached now
  pgProxy.hold();
  try {
    pgProxy.reset();
    const answers = await Promise.all(Array.from({ length: 5 }, () => context('hang-user')));
    expect(answers.map((res) => res.status)).toEqual(Array(5).fill(200));
    expect(pgProxy.writes()).toBe(0);
  } finally {
    pgProxy.release();
  }
});
