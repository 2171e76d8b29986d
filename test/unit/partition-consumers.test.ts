import { createLogger } from '../../shared/logger/logger';
import { BACKLOG_JOBS, MIN_HELD_JOBS, PartitionConsumers, heldJobs, type QueueConsumer } from '../../worker/partition-consumers';

describe('heldJobs: the jobs a consumer may hold for its partition’s backlog', () => {
  it('keeps the whole share while a backlog waits, so that it drains in big batches', () => {
    expect(heldJobs(BACKLOG_JOBS, 512)).toBe(512);
    expect(heldJobs(40_000, 512)).toBe(512);
  });

  it('holds few while jobs trickle in, so that BullMQ hands them over before it holds a whole share', () => {
    expect(heldJobs(0, 512)).toBe(MIN_HELD_JOBS);
    expect(heldJobs(BACKLOG_JOBS - 1, 512)).toBe(MIN_HELD_JOBS);
  });

  it('never holds more than the share, nor fewer than one', () => {
    expect(heldJobs(0, 4)).toBe(4);
    expect(heldJobs(BACKLOG_JOBS, 1)).toBe(1);
  });
});

/** A consumer whose partition holds `backlog` waiting jobs (or cannot be read while `unreadable`). */
class FakeConsumer implements QueueConsumer {
  backlog = 0;
  unreadable = false;
  closed = false;
  constructor(public concurrency: number) {}
  waiting(): Promise<number> {
    return this.unreadable ? Promise.reject(new Error('Redis is away')) : Promise.resolve(this.backlog);
  }
  ready(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** One worker alone in its group: it consumes every partition, each consumer a FakeConsumer. */
function aloneWith(partitions: number, concurrency: number) {
  const started = new Map<string, FakeConsumer>();
  const consumers = new PartitionConsumers({
    workerId: 'w1',
    group: { heartbeat: () => Promise.resolve(['w1']), leave: () => Promise.resolve(), announceChange: () => Promise.resolve() },
    partitionPrefixes: Array.from({ length: partitions }, (_, p) => `q${p}`),
    concurrency,
    heartbeatMs: 60_000,
    timeoutMs: 180_000,
    fitMs: 60_000,
    consume: (prefix, share) => {
      const consumer = new FakeConsumer(share);
      started.set(prefix, consumer);
      return consumer;
    },
    logger: createLogger('silent', 'test'),
    metrics: { partitionsAssigned: () => undefined },
  });
  return { consumers, started };
}

describe('PartitionConsumers.fit', () => {
  it("fits each consumer's jobs in hand to its own partition's backlog, within its share", async () => {
    const { consumers, started } = aloneWith(4, 2048);
    consumers.start();
    await consumers.joined;
    expect([...started.values()].map((c) => c.concurrency)).toEqual([512, 512, 512, 512]);
    started.get('q0')!.backlog = 5_000;
    started.get('q1')!.backlog = 3;
    await consumers.fit();
    expect([...started.values()].map((c) => c.concurrency)).toEqual([512, MIN_HELD_JOBS, MIN_HELD_JOBS, MIN_HELD_JOBS]);
    // The backlog drained: the consumer holds few again; one that grew gets its whole share.
    started.get('q0')!.backlog = 0;
    started.get('q3')!.backlog = BACKLOG_JOBS;
    await consumers.fit();
    expect([...started.values()].map((c) => c.concurrency)).toEqual([MIN_HELD_JOBS, MIN_HELD_JOBS, MIN_HELD_JOBS, 512]);
    await consumers.close();
    expect([...started.values()].every((c) => c.closed)).toBe(true);
  });

  it('leaves a consumer as it is when its backlog cannot be read', async () => {
    const { consumers, started } = aloneWith(2, 100);
    consumers.start();
    await consumers.joined;
    started.get('q0')!.unreadable = true;
    await consumers.fit();
    expect(started.get('q0')!.concurrency).toBe(50);
    expect(started.get('q1')!.concurrency).toBe(MIN_HELD_JOBS);
    await consumers.close();
  });
});
