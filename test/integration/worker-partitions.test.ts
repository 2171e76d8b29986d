import { findAccount } from '../../shared/accounts/account.repository';
import { assignPartitions } from '../../shared/jobs/partition-assignment';
import { WorkerGroup } from '../../shared/jobs/worker-group.repository';
import { userHash } from '../../shared/ids/user-hash';
import { createLogger } from '../../shared/logger/logger';
import type { RunningWorker } from '../../worker/worker';
import { capture } from '../support/cli';
import { bearer, eventually, startHarness, type Harness } from '../support/harness';
import { eventsQueues, outcomeLedger, type EventsQueues } from '../support/ledger';
import { sampleValue } from '../support/prometheus';
import { TEST_SECRET } from '../support/test-env';

/**
 * Workers on one events queue share its partitions out (docs/adr/0015-worker-partition-ownership.md):
 * each consumes a disjoint share and together they consume every partition; a worker that stops
 * hands its share over at once, one that stops beating (killed) after the heartbeat timeout; a
 * burst of outcomes for overlapping users is applied exactly once while shares change hands.
 */
const HEARTBEAT = { WORKER_HEARTBEAT_INTERVAL: '100ms', WORKER_HEARTBEAT_TIMEOUT: '1s' };
const TIMEOUT_MS = 1000;

let h: Harness;
let key: string;
let group: WorkerGroup;
let queues: EventsQueues;
const partitionCount = () => h.env.keys.queuePrefixes.length;
const logs = capture();

beforeAll(async () => {
  h = await startHarness();
  key = await h.key('partitions', 'test');
  group = new WorkerGroup(h.env.redis, h.env.keys);
  queues = eventsQueues(h.env.redis, h.env.keys);
});
afterAll(async () => {
  await queues.close();
  await h.close();
});

const start = () => h.startWorker(createLogger('info', 'worker-under-test', logs.stream), HEARTBEAT);

/**
 * Waits until the group is exactly `workers` and each consumes the share the assignment gives it
 * for them, with one BullMQ consumer per events queue (no partition still being handed over).
 */
async function shared(workers: RunningWorker[]): Promise<number[][]> {
  return eventually(async () => {
    const { members } = await group.read();
    if (
      members
        .map((m) => m.id)
        .sort()
        .join() !==
      workers
        .map((w) => w.id)
        .sort()
        .join()
    )
      return null;
    const wanted = assignPartitions(
      workers.map((w) => w.id),
      partitionCount(),
    );
    if (!workers.every((w) => w.partitions().join() === wanted.get(w.id)!.join())) return null;
    const consumers = await Promise.all(queues.queues.map((queue) => queue.getWorkersCount()));
    return consumers.every((count) => count === 1) ? workers.map((w) => w.partitions()) : null;
  });
}

const expectDisjointCover = (shares: number[][]) => {
  const all = shares.flat().sort((a, b) => a - b);
  expect(all).toEqual(Array.from({ length: partitionCount() }, (_, i) => i));
  for (const share of shares) {
    expect(share.length).toBeGreaterThanOrEqual(Math.floor(partitionCount() / shares.length));
    expect(share.length).toBeLessThanOrEqual(Math.ceil(partitionCount() / shares.length));
  }
};

const owned = async (worker: RunningWorker) => sampleValue(await worker.metrics.registry.metrics(), 'cos_worker_partitions_owned', {});

let first: RunningWorker;
let second: RunningWorker;
let third: RunningWorker;

it('gives two workers disjoint halves of the partitions, and a third its share of them', async () => {
  first = start();
  second = start();
  const two = await shared([first, second]);
  expectDisjointCover(two);
  expect(two.map((share) => share.length)).toEqual([partitionCount() / 2, partitionCount() / 2]);
  expect(await owned(first)).toBe(two[0]!.length);

  third = start();
  const three = await shared([first, second, third]);
  expectDisjointCover(three);
  expect(three[2]!.length).toBeGreaterThan(0);
  expect(await Promise.all([first, second, third].map(owned))).toEqual(three.map((share) => share.length));
  const assigned = logs
    .text()
    .split('\n')
    .filter((line) => line.includes('event-queue partitions assigned'))
    .map((line) => JSON.parse(line));
  expect(assigned).toContainEqual(expect.objectContaining({ level: 30, workerId: third.id, partitions: three[2], workers: 3 }));
});

it('applies a burst of outcomes for overlapping users exactly once while a worker stops and hands its share to the others', async () => {
  const users = Array.from({ length: 16 }, (_, i) => `burst-${i}`);
  const contexts = await Promise.all(
    users.flatMap((userId) =>
      Array.from({ length: 6 }, () => h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' })),
    ),
  );
  expect(contexts.map((res) => res.status)).toEqual(contexts.map(() => 200));
  const ids: string[] = contexts.map((res) => res.body.requestId);
  const bodies = ids.map((requestId, i) => ({ requestId, started: true, completed: i % 2 === 0, satisfaction: (i % 5) / 4 }));
  // Every outcome and a retry of every third one at once, while the first worker stops.
  const posting = Promise.all(
    [...bodies, ...bodies.filter((_, i) => i % 3 === 0)].map((body) => h.http().post('/v1/outcome').send(body).set(bearer(key))),
  );
  await first.close();
  // It left the group as it stopped: the others need not wait for its heartbeat to time out.
  expect((await group.read()).members.map((m) => m.id)).not.toContain(first.id);
  expect((await posting).map((res) => res.status)).toEqual([...bodies, ...bodies.filter((_, i) => i % 3 === 0)].map(() => 202));
  expectDisjointCover(await shared([second, third]));

  const ledger = await eventually(async () => {
    const state = await outcomeLedger(h.env.db, ids);
    return state.applied === ids.length ? state : null;
  }, 60_000);
  expect(ledger).toEqual({ applied: ids.length, missing: [], appliedTwice: [] });
  for (const userId of users) {
    expect((await h.http().get(`/v1/profile/${userId}`).set(bearer(key))).body).toMatchObject({
      interactionCount: 6,
      profileVersion: 'v6',
    });
  }
  // The users' events went through more than one partition.
  const completed = await Promise.all(queues.queues.map((queue) => queue.getJobCountByTypes('completed')));
  expect(completed.filter((count) => count > 0).length).toBeGreaterThan(1);
});

it('takes over the partitions of a worker that stops beating (killed) once its heartbeat times out, and applies what waited there', async () => {
  // A member that beats once and never again, as a worker SIGKILLed right after joining.
  const ghost = 'killed-host:1:0badc0de';
  await group.heartbeat(ghost, [], TIMEOUT_MS);
  const ghostShare = assignPartitions([second.id, third.id, ghost], partitionCount()).get(ghost)!;
  expect(ghostShare.length).toBeGreaterThan(0);
  let userId = '';
  // Kept alive until the outcome waits in its partition: the live workers leave the ghost its
  // share, so nobody consumes those partitions meanwhile.
  const keepAlive = setInterval(() => void group.heartbeat(ghost, [], TIMEOUT_MS), 100);
  try {
    await eventually(async () => [second, third].every((w) => w.partitions().every((p) => !ghostShare.includes(p))));
    const account = (await findAccount(h.env.db, 'partitions'))!;
    const partitionOf = (candidate: string) =>
      h.env.keys.queuePartition(userHash(TEST_SECRET, { accountId: account.id, environment: 'test' }, candidate));
    userId = Array.from({ length: 200 }, (_, i) => `stranded-${i}`).find((candidate) => ghostShare.includes(partitionOf(candidate)))!;
    const requestId = (await h.http().post('/v1/context').set(bearer(key)).send({ userId, task: 't', complexity: 'low' })).body.requestId;
    expect((await h.http().post('/v1/outcome').set(bearer(key)).send({ requestId, started: true })).status).toBe(202);
    const stranded = queues.queues[partitionOf(userId)]!;
    expect(await stranded.getWorkersCount()).toBe(0);
    expect(await stranded.getJobCountByTypes('wait')).toBeGreaterThan(0);
  } finally {
    clearInterval(keepAlive);
  }

  // The ghost is pruned after the timeout; its partitions are consumed again and the outcome applied.
  const shares = await shared([second, third]);
  expectDisjointCover(shares);
  expect((await group.read()).members.map((m) => m.id)).not.toContain(ghost);
  await eventually(async () => (await h.http().get(`/v1/profile/${userId}`).set(bearer(key))).body.interactionCount === 1);
});

it('leaves no member behind when the last workers stop', async () => {
  await Promise.all([second.close(), third.close()]);
  expect((await group.read()).members).toEqual([]);
});

it('shares the partitions at once when a worker joins or leaves, not at the next heartbeat: each announces it', async () => {
  // Heartbeats far apart: only the announcements can make the group change within the test.
  const slow = { WORKER_HEARTBEAT_INTERVAL: '60s', WORKER_HEARTBEAT_TIMEOUT: '120s' };
  const alone = h.startWorker(createLogger('info', 'worker-under-test', logs.stream), slow);
  await alone.joined;
  expect(alone.partitions()).toHaveLength(partitionCount());
  const joining = h.startWorker(createLogger('info', 'worker-under-test', logs.stream), slow);
  const startedAt = Date.now();
  expectDisjointCover(await shared([alone, joining]));
  expect(Date.now() - startedAt).toBeLessThan(10_000);

  await joining.close();
  await eventually(async () => alone.partitions().length === partitionCount());
  expect(Date.now() - startedAt).toBeLessThan(20_000);
  await alone.close();
  expect((await group.read()).members).toEqual([]);
});
