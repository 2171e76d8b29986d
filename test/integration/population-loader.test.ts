import { freePort } from '../../scripts/local-services';
import { PopulationLoader, POPULATION_REFRESH_MS, POPULATION_STORE_REFRESH_MS } from '../../api/services/population-loader';
import { createDb, DB_ROLES, type Db } from '../../shared/db/database';
import { createEngine } from '../../shared/domain/engine/engine';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import { seededRandom } from '../../shared/domain/random';
import { createLogger } from '../../shared/logger/logger';
import { PopulationCache } from '../../shared/population/population-cache.repository';
import { findPopulation, mergeIntoPopulation } from '../../shared/population/population.repository';
import { eventually } from '../support/harness';
import { createTestEnv, type TestEnv } from '../support/test-env';

/** How the API gets a tenant's population prior: Redis, else Postgres, from memory in between. */
let env: TestEnv;
let unreachable: Db;
let cache: PopulationCache;
const logger = createLogger('silent', 'test');
const engine = createEngine();
/** What a loader serves, as stored: the prior's sums. */
const sumsOf = async (loading: Promise<CompiledPopulation>) => (await loading).sums;
beforeAll(async () => {
  env = await createTestEnv();
  cache = new PopulationCache(env.redis, env.keys);
  // A real connection to a port nobody listens on: every query fails as in a Postgres outage.
  unreachable = createDb(`postgres://postgres@127.0.0.1:${await freePort()}/cos`, { ...DB_ROLES.tool, poolSize: 1 });
});
afterAll(async () => {
  await unreachable.destroy();
  await env.close();
});

/** Checks that the loader has started background refresh number `calls` (seen by its spied version read), and waits until it has finished. */
async function refreshed(
  loader: PopulationLoader,
  versions: jest.SpiedFunction<PopulationCache['readVersion']>,
  calls: number,
): Promise<void> {
  expect(versions.mock.results.length).toBe(calls);
  await loader.refreshesDone();
}

/** A prior that has seen some outcomes (so it differs from the empty one). */
function trainedPrior(): CompiledPopulation {
  const random = seededRandom(1);
  let prior = engine.emptyPrior();
  const state = engine.initialState(prior);
  for (let i = 0; i < 20; i++) {
    const decision = engine.decide(state, { context: { taskComplexity: 'low' }, pins: {}, random }, prior);
    const delta = engine.emptyDelta();
    const reward = random();
    const feedback = {
      context: { taskComplexity: 'low' as const },
      choice: decision.choice,
      probabilities: decision.probabilities,
      reward,
      started: reward > 0.5,
    };
    const after = engine.update(state, feedback, prior);
    engine.observe(delta, prior, { before: state, after, feedback });
    prior = engine.mergePrior(prior, delta);
  }
  return prior;
}

it('reads Postgres when Redis has no copy, writes the copy, and serves from memory until the refresh interval', async () => {
  const tenant = { accountId: 'acct_loader_pg', environment: 'live' as const };
  const prior = trainedPrior();
  const stored = await mergeIntoPopulation(env.db, tenant, () => prior);
  let now = 1_000;
  const loader = new PopulationLoader({ db: env.db, cache, learner: engine, logger, now: () => now });
  expect(await sumsOf(loader.get(tenant))).toEqual(prior.sums);
  expect((await cache.read(tenant))?.version).toBe(stored.version);

  // A refresh that finds the same version keeps the object it already parsed.
  const first = await loader.get(tenant);
  // It asks Redis for the version only.
  const versions = jest.spyOn(cache, 'readVersion');
  const reads = jest.spyOn(cache, 'read');
  now += POPULATION_REFRESH_MS;
  await loader.get(tenant);
  await refreshed(loader, versions, 1);
  expect(reads).not.toHaveBeenCalled();
  versions.mockRestore();
  reads.mockRestore();
  expect(await loader.get(tenant)).toBe(first);

  // A newer prior in Redis is picked up only after the refresh interval, in the background.
  const newer = engine.mergePrior(prior, prior.sums);
  await cache.writeManyIfNewer([{ tenant, population: { version: stored.version + 1, prior: newer } }]);
  expect(await sumsOf(loader.get(tenant))).toEqual(prior.sums);
  now += POPULATION_REFRESH_MS;
  await eventually(async () => JSON.stringify(await sumsOf(loader.get(tenant))) === JSON.stringify(newer.sums));
});

it('shares one first load between concurrent first requests of a tenant', async () => {
  const tenant = { accountId: 'acct_loader_concurrent', environment: 'live' as const };
  const prior = trainedPrior();
  await cache.writeManyIfNewer([{ tenant, population: { version: 1, prior } }]);
  const loader = new PopulationLoader({ db: env.db, cache, learner: engine, logger });
  const reads = jest.spyOn(cache, 'read');
  const priors = await Promise.all(Array.from({ length: 5 }, () => loader.get(tenant)));
  expect(reads).toHaveBeenCalledTimes(1);
  reads.mockRestore();
  expect(priors[0]!.sums).toEqual(prior.sums);
  for (const other of priors) expect(other).toBe(priors[0]);
});

it('serves an empty prior when Postgres cannot be read, and the real one once it is in Redis', async () => {
  const tenant = { accountId: 'acct_loader_down', environment: 'live' as const };
  let now = 1_000;
  const loader = new PopulationLoader({ db: unreachable, cache, learner: engine, logger, now: () => now });
  expect(await sumsOf(loader.get(tenant))).toEqual(engine.emptyPrior().sums);
  await expect(findPopulation(unreachable, tenant)).rejects.toThrow();

  const prior = trainedPrior();
  await cache.writeManyIfNewer([{ tenant, population: { version: 3, prior } }]);
  now += POPULATION_REFRESH_MS;
  await eventually(async () => JSON.stringify(await sumsOf(loader.get(tenant))) === JSON.stringify(prior.sums));
});

it('asks Postgres at most once per POPULATION_STORE_REFRESH_MS while Redis has no copy, and then goes to it directly', async () => {
  const tenant = { accountId: 'acct_loader_none', environment: 'live' as const };
  let now = 1_000;
  const loader = new PopulationLoader({ db: env.db, cache, learner: engine, logger, now: () => now });
  const versions = jest.spyOn(cache, 'readVersion');
  const reads = jest.spyOn(cache, 'read');
  expect(await sumsOf(loader.get(tenant))).toEqual(engine.emptyPrior().sums); // first request: Redis, then Postgres (no row)
  expect(reads).toHaveBeenCalledTimes(1);

  // A prior appears in Postgres only (as if the worker's copy to Redis had been lost).
  const prior = trainedPrior();
  await mergeIntoPopulation(env.db, tenant, () => prior);
  now += POPULATION_REFRESH_MS;
  await loader.get(tenant);
  await refreshed(loader, versions, 1);
  // No copy in Redis and Postgres read less than a second ago: nothing more was read.
  expect(await sumsOf(loader.get(tenant))).toEqual(engine.emptyPrior().sums);
  now += POPULATION_STORE_REFRESH_MS - POPULATION_REFRESH_MS;
  await loader.get(tenant);
  await refreshed(loader, versions, 2);
  // A second after the last Postgres read it reads Postgres, without asking Redis for the whole prior again.
  expect(await sumsOf(loader.get(tenant))).toEqual(prior.sums);
  expect(reads).toHaveBeenCalledTimes(1);
  expect((await cache.read(tenant))?.prior.sums).toEqual(prior.sums); // and copies it to Redis
  versions.mockRestore();
  reads.mockRestore();
});
