import { JOBS } from '../../shared/jobs/catalog';
import { retryDelay, type RetrySchedule } from '../../shared/jobs/retry';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { eventsIdle, eventsQueues, outcomeLedger, type EventsQueues } from '../support/ledger';

/**
 * A Postgres outage longer than any fixed retry budget, for the API and the worker alike (both
 * reach Postgres through a proxy that cuts them off). The retry schedule is the default one
 * (1 s doubling up to 30 s) run 150 times faster, and the outage lasts until every queued
 * outcome has failed as many times as it would in 10 minutes at the default schedule.
 */
const SPEED = 150;
const DEFAULT_SCHEDULE: RetrySchedule = { baseMs: 1000, maxMs: 30_000 };
const OUTAGE_MS = 10 * 60_000;
/** Attempts a job fails in OUTAGE_MS at the default schedule (the most it can: no jitter). */
const ATTEMPTS_IN_OUTAGE = (() => {
  let attempts = 1;
  for (let waited = 0; waited < OUTAGE_MS; attempts++) waited += retryDelay(DEFAULT_SCHEDULE, attempts, () => 0);
  return attempts;
})();
/** What jobs had before: 10 attempts, then the failed set. */
const OLD_ATTEMPTS = 10;

let proxy: CountingProxy;
let h: Harness;
let key: string;
let queue: EventsQueues;
beforeAll(async () => {
  proxy = await startCountingProxy(process.env.COS_TEST_ADMIN_URL!);
  h = await startHarness((env) => ({ DATABASE_URL: proxy.via(env.databaseUrl) }));
  key = await h.key('outage', 'test');
  queue = eventsQueues(h.env.redis, h.env.keys);
  h.startWorker(undefined, {
    JOB_RETRY_DELAY: `${DEFAULT_SCHEDULE.baseMs / SPEED}ms`,
    JOB_RETRY_MAX_DELAY: `${DEFAULT_SCHEDULE.maxMs / SPEED}ms`,
  });
});
afterAll(async () => {
  await proxy.resume();
  await queue.close();
  await h.close();
  await proxy.close();
});

const context = async (userId: string): Promise<string> => {
  const res = await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 'File the invoices', complexity: 'medium' });
  expect(res.status).toBe(200);
  return res.body.requestId;
};
const outcome = async (requestId: string, started: boolean) => {
  const res = await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started });
  expect(res.status).toBe(202);
  return requestId;
};

it('ends with every outcome accepted before and during a 10-minute-equivalent outage applied exactly once, none parked', async () => {
  expect(ATTEMPTS_IN_OUTAGE).toBeGreaterThan(2 * OLD_ATTEMPTS);
  const users = Array.from({ length: 20 }, (_, i) => `out-${i}`);
  const first = await Promise.all(users.map(context));
  const second = await Promise.all(users.map(context));
  await h.deps.decisions.sendNow(); // the API logs decisions behind its answers
  await eventually(() => eventsIdle(queue)); // decisions stored, profiles cached

  // Outcomes accepted just before the outage (some may still be in flight when it starts)…
  const before = await Promise.all(first.map((id, i) => outcome(id, i % 2 === 0)));
  await proxy.interrupt();
  // …and during it: for requestIds issued before, and for new context calls answered from the cache.
  const during = await Promise.all(second.map((id, i) => outcome(id, i % 3 === 0)));
  const third = await Promise.all(users.map(context));
  const duringNew = await Promise.all(third.map((id) => outcome(id, true)));

  const queued = async () => {
    const jobs = await queue.getJobs(['wait', 'active', 'delayed', 'prioritized']);
    return jobs.filter((job) => job.name === 'outcomes');
  };
  const stuck = await queued();
  const outcomesIn = (jobs: typeof stuck) => jobs.reduce((n, job) => n + JOBS.outcomes.schema.parse(job.data).outcomes.length, 0);
  expect(outcomesIn(stuck)).toBeGreaterThanOrEqual(during.length + duringNew.length);
  // The outage lasts until each of them has failed as often as in 10 minutes at the default schedule.
  await eventually(
    async () => {
      const jobs = await queued();
      expect(await queue.count('failed')).toBe(0);
      return jobs.length >= stuck.length && jobs.every((job) => job.attemptsMade >= ATTEMPTS_IN_OUTAGE);
    },
    60_000,
    100,
  );
  expect((await outcomeLedger(h.env.db, [...during, ...duringNew])).applied).toBe(0);
  await proxy.resume();

  await eventually(() => eventsIdle(queue), 60_000, 100);
  const accepted = [...before, ...during, ...duringNew];
  expect(await outcomeLedger(h.env.db, accepted)).toEqual({ applied: accepted.length, missing: [], appliedTwice: [] });
  expect(await queue.count('failed')).toBe(0);
  for (const userId of users) {
    const profile = await h.http().get(`/v1/profile/${userId}`).set(bearer(key));
    expect(profile.body).toMatchObject({ interactionCount: 3, profileVersion: 'v3' });
  }
}, 120_000);
