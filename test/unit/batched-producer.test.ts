import { BatchedProducer, MIN_JOB_SPACING_MS } from '../../shared/jobs/batched-producer';
import type { OutcomeJob } from '../../shared/jobs/catalog';
import type { EventQueues } from '../../shared/jobs/event-queues';

/** A queue whose adds land when the test says so; users `p0-…` and `p1-…` are on partitions 0 and 1. */
class HeldQueues implements Pick<EventQueues, 'add' | 'partitionOf'> {
  readonly sent: Array<{ partition: number; requestIds: string[]; land: () => void; fail: (error: Error) => void }> = [];

  partitionOf(userHash: string): number {
    return Number(userHash[1]);
  }

  add: EventQueues['add'] = (_name, data, partition) =>
    new Promise<void>((resolve, reject) => {
      const requestIds = 'outcomes' in data ? data.outcomes.map((o) => o.requestId) : [];
      this.sent.push({ partition, requestIds, land: resolve, fail: reject });
    });
}

const outcome = (requestId: string): OutcomeJob => ({
  accountId: 'a',
  environment: 'test',
  requestId,
  signals: { started: true },
  receivedAt: 0,
});
const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

// The clock and timers are Jest's, so a partition's spacing passes only when a test says so;
// turns (setImmediate) and promises run as usual.
beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
afterEach(() => jest.useRealTimers());

/** A producer on held queues; `add` records when each caller's promise settles (`r1`, or `r1!` for a rejection). */
function producerOnHeldQueues(maxBatch?: number) {
  const queues = new HeldQueues();
  const producer = new BatchedProducer(queues, maxBatch);
  const settled: string[] = [];
  const add = (userHash: string, requestId: string) =>
    void producer.add(userHash, outcome(requestId)).then(
      () => settled.push(requestId),
      () => settled.push(`${requestId}!`),
    );
  const sent = () => queues.sent.map(({ requestIds }) => requestIds);
  return { queues, producer, settled, add, sent };
}

it('sends the outcomes of one turn and partition as one job, once the turn ends', async () => {
  const { queues, settled, add, sent } = producerOnHeldQueues();
  add('p0-u1', 'r1');
  add('p0-u2', 'r2');
  add('p1-u3', 'r3');
  expect(sent()).toEqual([]);
  await endOfTurn();
  expect(queues.sent.map(({ partition, requestIds }) => [partition, requestIds])).toEqual([
    [0, ['r1', 'r2']],
    [1, ['r3']],
  ]);
  queues.sent[1]!.land();
  await endOfTurn();
  expect(settled).toEqual(['r3']); // each caller waits for its own job only
  queues.sent[0]!.land();
  await endOfTurn();
  expect(settled).toEqual(['r3', 'r1', 'r2']);
});

it('while a partition has a job in flight, gathers the next turns into one job sent when it lands', async () => {
  const { queues, settled, add, sent } = producerOnHeldQueues();
  add('p0-u1', 'r1');
  await endOfTurn();
  add('p0-u2', 'r2');
  await endOfTurn();
  add('p0-u3', 'r3');
  add('p1-u4', 'r4'); // another partition is not held back
  await endOfTurn();
  expect(queues.sent.map(({ partition, requestIds }) => [partition, requestIds])).toEqual([
    [0, ['r1']],
    [1, ['r4']],
  ]);
  queues.sent[0]!.land();
  await endOfTurn();
  expect(sent()).toEqual([['r1'], ['r4'], ['r2', 'r3']]);
  expect(settled).toEqual(['r1']);
  queues.sent[2]!.land();
  await endOfTurn();
  expect(settled).toEqual(['r1', 'r2', 'r3']);
});

it('rejects the callers of a failed job and still sends the batch that waited for it', async () => {
  const { queues, settled, add, sent } = producerOnHeldQueues();
  add('p0-u1', 'r1');
  await endOfTurn();
  add('p0-u2', 'r2');
  await endOfTurn();
  queues.sent[0]!.fail(new Error('Connection is closed.'));
  await endOfTurn();
  expect(sent()).toEqual([['r1'], ['r2']]);
  queues.sent[1]!.land();
  await endOfTurn();
  expect(settled).toEqual(['r1!', 'r2']);
});

it('sends a full batch at once, job in flight or not, and everything open on close', async () => {
  const { producer, add, sent } = producerOnHeldQueues(2);
  add('p0-u1', 'r1');
  await endOfTurn();
  add('p0-u2', 'r2');
  add('p0-u3', 'r3'); // full: goes though r1's job is in flight
  add('p0-u4', 'r4');
  expect(sent()).toEqual([['r1'], ['r2', 'r3']]);
  producer.close();
  expect(sent()).toEqual([['r1'], ['r2', 'r3'], ['r4']]);
});

it('while outcomes arrive together, sends at most one job per partition in each spacing', async () => {
  const { queues, settled, add, sent } = producerOnHeldQueues();
  add('p0-u0', 'r0');
  add('p0-u1', 'r1');
  await endOfTurn();
  queues.sent[0]!.land();
  await endOfTurn();
  add('p0-u2', 'r2'); // landed, but its partition sent two outcomes less than the spacing ago
  await endOfTurn();
  jest.advanceTimersByTime(MIN_JOB_SPACING_MS - 1);
  add('p0-u3', 'r3');
  add('p1-u4', 'r4'); // another partition's spacing is its own
  await endOfTurn();
  expect(sent()).toEqual([['r0', 'r1'], ['r4']]);
  jest.advanceTimersByTime(1);
  expect(sent()).toEqual([['r0', 'r1'], ['r4'], ['r2', 'r3']]);
  queues.sent[2]!.land();
  await endOfTurn();
  expect(settled).toEqual(['r0', 'r1', 'r2', 'r3']);
});

it('does not hold back a client posting one outcome at a time', async () => {
  const { queues, add, sent } = producerOnHeldQueues();
  for (let i = 1; i <= 3; i++) {
    add('p0-u1', `r${i}`);
    await endOfTurn();
    expect(sent()).toHaveLength(i); // the last job carried one outcome: no spacing
    queues.sent[i - 1]!.land();
    await endOfTurn();
  }
});

it('sends at the end of the turn when the partition sent nothing for the spacing', async () => {
  const { queues, add, sent } = producerOnHeldQueues();
  add('p0-u0', 'r0');
  add('p0-u1', 'r1');
  await endOfTurn();
  queues.sent[0]!.land();
  jest.advanceTimersByTime(MIN_JOB_SPACING_MS);
  add('p0-u2', 'r2');
  await endOfTurn();
  expect(sent()).toEqual([['r0', 'r1'], ['r2']]);
});

it('sends a full batch during the spacing, and one held by it on close', async () => {
  const { producer, queues, add, sent } = producerOnHeldQueues(3);
  add('p0-u0', 'r0');
  add('p0-u1', 'r1');
  await endOfTurn();
  queues.sent[0]!.land();
  await endOfTurn();
  add('p0-u2', 'r2'); // held by the spacing
  await endOfTurn();
  expect(sent()).toEqual([['r0', 'r1']]);
  add('p0-u3', 'r3');
  add('p0-u4', 'r4'); // full: goes at once
  expect(sent()).toEqual([
    ['r0', 'r1'],
    ['r2', 'r3', 'r4'],
  ]);
  queues.sent[1]!.land();
  await endOfTurn();
  jest.advanceTimersByTime(MIN_JOB_SPACING_MS); // the spacing's timer went with the full batch
  expect(sent()).toEqual([
    ['r0', 'r1'],
    ['r2', 'r3', 'r4'],
  ]);
  add('p0-u5', 'r5');
  await endOfTurn();
  expect(sent()).toHaveLength(3); // the spacing is over: r5 goes at the end of its turn
  queues.sent[2]!.land();
  await endOfTurn();
  add('p0-u6', 'r6');
  add('p0-u7', 'r7');
  await endOfTurn();
  queues.sent[3]!.land();
  await endOfTurn();
  add('p0-u8', 'r8'); // held: the last job carried two
  await endOfTurn();
  producer.close(); // sends it anyway
  expect(sent()).toEqual([['r0', 'r1'], ['r2', 'r3', 'r4'], ['r5'], ['r6', 'r7'], ['r8']]);
});

it('times the spacing on a clock that a wall-clock step does not move', async () => {
  const { queues, add, sent } = producerOnHeldQueues();
  add('p0-u0', 'r0');
  add('p0-u1', 'r1');
  await endOfTurn();
  queues.sent[0]!.land();
  await endOfTurn();
  jest.setSystemTime(Date.now() - 60_000); // the wall clock stepped back a minute
  add('p0-u2', 'r2');
  await endOfTurn();
  jest.advanceTimersByTime(MIN_JOB_SPACING_MS);
  expect(sent()).toEqual([['r0', 'r1'], ['r2']]);
});
