import { JOBS } from '../../shared/jobs/catalog';
import type { RetrySchedule } from '../../shared/jobs/retry';
import type { RunningWorker } from '../../worker/worker';
import { startCountingProxy, type CountingProxy } from '../support/counting-proxy';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { eventsIdle, eventsQueues, outcomeLedger, type EventsQueues } from '../support/ledger';

/**
 * A Postgres outage longer than any retry budget, for the API and the worker alike (both reach
 * Postgres through a proxy that cuts them off). The retry schedule is the default one (1 s
 * doubling up to 30 s) run 150 times faster, so a worker that spent attempts on the outage would
 * spend dozens here; it spends none: it sees Postgres gone, stops taking jobs and holds the ones
 * it has until Postgres answers again.
 */
const SPEED = 150;
const DEFAULT_SCHEDULE: RetrySchedule = { baseMs: 1000, maxMs: 30_000 };
/** Long enough for a job failing on every retry to have failed more than 10 times at this speed. */
const HELD_MS = 2_000;

let proxy: CountingProxy;
let h: Harness;
let key: string;
let queue: EventsQueues;
let worker: RunningWorker;
beforeAll(async () => {
  proxy = await startCountingProxy(process.env.COS_TEST_ADMIN_URL!);
  h = await startHarness((env) => ({ DATABASE_URL: proxy.via(env.databaseUrl) }));
  key = await h.key('outage', 'test');
  queue = eventsQueues(h.env.redis, h.env.keys);
  worker = h.startWorker(undefined, {
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

it('holds every job through the outage without spending an attempt, then applies each accepted outcome exactly once', async () => {
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
  await eventually(async () => worker.outages.status('postgres') === 'unavailable');
  const third = await Promise.all(users.map(context));
  const duringNew = await Promise.all(third.map((id) => outcome(id, true)));

  const queued = async () => {
    const jobs = await queue.getJobs(['wait', 'active', 'delayed', 'prioritized']);
    return jobs.filter((job) => job.name === 'outcomes');
  };
  const outcomesIn = (jobs: Awaited<ReturnType<typeof queued>>) =>
    jobs.reduce((n, job) => n + JOBS.outcomes.schema.parse(job.data).outcomes.length, 0);
  expect(outcomesIn(await queued())).toBeGreaterThanOrEqual(during.length + duringNew.length);
  // Well past the time a retried job would have failed a dozen times: not one attempt spent,
  // nothing delayed or parked, and what arrived after the outage began is still waiting.
  await eventually(async () => worker.outages.downSeconds('postgres') * 1000 >= HELD_MS, 10_000);
  const held = await queued();
  expect(held.map((job) => job.attemptsMade)).toEqual(held.map(() => 0));
  expect(await queue.count('delayed')).toBe(0);
  expect(await queue.count('failed')).toBe(0);
  expect(await queue.count('wait')).toBeGreaterThan(0);
  expect((await outcomeLedger(h.env.db, [...during, ...duringNew])).applied).toBe(0);
  await proxy.resume();

  await eventually(() => eventsIdle(queue), 60_000, 100);
  expect(worker.outages.anyDown).toBe(false);
  const accepted = [...before, ...during, ...duringNew];
  expect(await outcomeLedger(h.env.db, accepted)).toEqual({ applied: accepted.length, missing: [], appliedTwice: [] });
  expect(await queue.count('failed')).toBe(0);
  for (const userId of users) {
    const profile = await h.http().get(`/v1/profile/${userId}`).set(bearer(key));
    expect(profile.body).toMatchObject({ interactionCount: 3, profileVersion: 'v3' });
  }
}, 120_000);
