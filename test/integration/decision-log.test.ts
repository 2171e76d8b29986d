import { Queue } from 'bullmq';
import { EVENTS_QUEUE, JOBS, type DecisionJob } from '../../shared/jobs/catalog';
import { DecisionLog, DECISION_LOG_DEFAULTS } from '../../shared/jobs/decision-log';
import { EventQueues } from '../../shared/jobs/event-queues';
import { createLogger } from '../../shared/logger/logger';
import { createRedis, type RedisClient } from '../../shared/redis/redis';
import { startRedisProxy, type RedisProxy } from '../support/redis-proxy';
import { eventually } from '../support/harness';
import { createTestEnv, type TestEnv } from '../support/test-env';

/** The decision log sends decisions behind the answers: batched, retried, bounded. */
let env: TestEnv;
let proxy: RedisProxy;
let connection: RedisClient;
let queues: EventQueues;
let reader: Queue[];

beforeAll(async () => {
  env = await createTestEnv();
  proxy = await startRedisProxy(env);
  // The API's producer connection (fail fast, no offline queue), through proxies that can cut it.
  connection = createRedis(proxy.target, 'producer');
  queues = new EventQueues(connection, env.keys);
  reader = env.keys.queuePrefixes.map((prefix) => new Queue(EVENTS_QUEUE, { connection: env.redis, prefix }));
});
afterAll(async () => {
  await Promise.all(reader.map((queue) => queue.close()));
  await queues.close();
  connection.disconnect();
  await proxy.close();
  await env.close();
});

let seq = 0;
function decision(userId: string): DecisionJob {
  seq++;
  return {
    accountId: 'acct_log',
    environment: 'test',
    requestId: `req_log_${seq}`,
    userId,
    generation: 'g',
    context: { complexity: 'low' },
    choice: { framing: 'purpose', style: 'warm', complexityHandling: 'chunked', encouragement: 'minimal' },
    probabilities: { framing: 0.5, style: 0.5, complexityHandling: 0.5, encouragement: 0.5 },
    explored: [],
    confidence: 0.3,
    issuedAt: Date.now(),
  };
}

/** Every decision in the queued `decisions` jobs of all partitions, by request id, with how many jobs hold it. */
async function queued(): Promise<{ jobs: number; byRequestId: Map<string, number> }> {
  const jobs = (await Promise.all(reader.map((queue) => queue.getJobs(['waiting', 'delayed', 'prioritized'])))).flat();
  const byRequestId = new Map<string, number>();
  const decisionJobs = jobs.filter((job) => job.name === 'decisions');
  for (const job of decisionJobs)
    for (const d of JOBS.decisions.schema.parse(job.data).decisions) byRequestId.set(d.requestId, (byRequestId.get(d.requestId) ?? 0) + 1);
  return { jobs: decisionJobs.length, byRequestId };
}

const silent = createLogger('silent', 'test');

beforeEach(async () => {
  await Promise.all(reader.map((queue) => queue.obliterate({ force: true })));
});

it('sends the decisions recorded within its window as one job per partition, once the window has passed', async () => {
  const log = new DecisionLog(queues, silent, { ...DECISION_LOG_DEFAULTS, flushMs: 30 });
  const users = Array.from({ length: 40 }, (_, i) => `user-${i}`);
  const recorded = users.map((userId) => decision(userId));
  recorded.forEach((d, i) => log.record(`${i.toString(16).padStart(16, '0')}`, d));
  expect(log.held).toBe(40);
  await eventually(async () => log.held === 0);
  const { jobs, byRequestId } = await queued();
  expect(jobs).toBe(new Set(recorded.map((_, i) => env.keys.queuePartition(i.toString(16).padStart(16, '0')))).size);
  expect([...byRequestId.keys()].sort()).toEqual(recorded.map((d) => d.requestId).sort());
  expect(log.batchesSent).toBe(jobs);
  await log.close();
});

it('sends a full batch at once, without waiting for the window', async () => {
  const log = new DecisionLog(queues, silent, { ...DECISION_LOG_DEFAULTS, flushMs: 60_000, maxBatch: 5 });
  for (let i = 0; i < 5; i++) log.record('00000000000000aa', decision(`full-${i}`));
  await eventually(async () => log.batchesSent === 1);
  expect((await queued()).byRequestId.size).toBe(5);
  await log.close();
});

it('keeps a batch Redis refused and sends it once Redis is back, exactly once', async () => {
  const log = new DecisionLog(queues, silent, { ...DECISION_LOG_DEFAULTS, flushMs: 5, retryMs: 50 });
  await proxy.interrupt();
  const recorded = [decision('outage-1'), decision('outage-2')];
  for (const d of recorded) log.record('00000000000000bb', d);
  if (env.clusterNodes) {
    // A cluster client that lost every node holds the send until it has one: still held.
    await eventually(async () => connection.status !== 'ready');
  } else {
    // Refused at least once (the retry timer is armed), and still held.
    await eventually(async () => log.retrying > 0);
  }
  expect(log.held).toBe(2);
  expect((await queued()).byRequestId.size).toBe(0);
  await proxy.resume();
  await eventually(async () => log.held === 0, 20_000);
  const { byRequestId } = await queued();
  for (const d of recorded) expect(byRequestId.get(d.requestId)).toBe(1);
  await log.close();
});

it('stops logging new decisions past its bound in bytes, metadata counted, and counts them', async () => {
  const log = new DecisionLog(queues, silent, { ...DECISION_LOG_DEFAULTS, flushMs: 60_000, maxHeldBytes: 5_000 });
  for (let i = 0; i < 3; i++) log.record('00000000000000cc', decision(`bound-${i}`));
  expect(log.held).toBe(3);
  // A decision with 2 KB of metadata no longer fits; a plain one still does.
  const heavy = decision('bound-heavy');
  heavy.context.metadata = { note: 'x'.repeat(2_000) };
  log.record('00000000000000cc', heavy);
  log.record('00000000000000cc', decision('bound-4'));
  log.record('00000000000000cc', decision('bound-5'));
  expect(log.held).toBe(4);
  expect(log.dropped).toBe(2);
  await log.close();
  expect((await queued()).byRequestId.size).toBe(4);
  expect(log.heldBytes).toBe(0);
});

it('does not queue a batch twice when a send landed but its answer was lost: the retry reuses the job id', async () => {
  const log = new DecisionLog(queues, silent, { ...DECISION_LOG_DEFAULTS, flushMs: 5, retryMs: 50 });
  // The first add lands in Redis, then the client is told it failed (as when the connection drops after the write).
  const add = queues.add.bind(queues);
  let failedOnce = false;
  const patched = Object.assign(queues, {
    add: async (...args: Parameters<EventQueues['add']>) => {
      await add(...args);
      if (!failedOnce) {
        failedOnce = true;
        throw new Error('Connection is closed.');
      }
    },
  });
  try {
    const recorded = decision('lost-answer');
    log.record('00000000000000ee', recorded);
    await eventually(async () => log.held === 0, 20_000);
    expect(failedOnce).toBe(true);
    const { jobs, byRequestId } = await queued();
    expect(jobs).toBe(1);
    expect(byRequestId.get(recorded.requestId)).toBe(1);
  } finally {
    Object.assign(patched, { add });
    await log.close();
  }
});

it('sends what it holds when closed', async () => {
  const log = new DecisionLog(queues, silent, { ...DECISION_LOG_DEFAULTS, flushMs: 60_000 });
  log.record('00000000000000dd', decision('closing'));
  await log.close();
  expect(log.held).toBe(0);
  expect((await queued()).byRequestId.size).toBe(1);
});
