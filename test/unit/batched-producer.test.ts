import { BatchedProducer } from '../../shared/jobs/batched-producer';
import type { OutcomeJob } from '../../shared/jobs/catalog';
import type { EventQueues } from '../../shared/jobs/event-queues';

/**
 * When the outcome producer sends (shared/jobs/batched-producer.ts): after the turn when
 * nothing of the partition is in flight, else once the batch in flight has landed. The queue is
 * replaced by a recorder whose sends land when the test says; only the schedule is under test
 * (the real queue is exercised by the outcome suites).
 */
type Send = { partition: number; requestIds: string[]; land: () => void; fail: (error: Error) => void };

function recorder() {
  const sends: Send[] = [];
  const queues = {
    partitionOf: (userHash: string) => Number(userHash),
    add: (_name: string, data: { outcomes: OutcomeJob[] }, partition: number) =>
      new Promise<void>((resolve, reject) =>
        sends.push({ partition, requestIds: data.outcomes.map((o) => o.requestId), land: resolve, fail: reject }),
      ),
  } as unknown as EventQueues;
  return { queues, sends };
}

const outcome = (requestId: string): OutcomeJob => ({
  accountId: 'a',
  environment: 'test',
  requestId,
  signals: { started: true },
  receivedAt: 0,
});
const turn = () => new Promise((resolve) => setImmediate(resolve));

it('sends the outcomes of one turn as one job per partition', async () => {
  const { queues, sends } = recorder();
  const producer = new BatchedProducer(queues);
  const answered = [producer.add('0', outcome('a')), producer.add('0', outcome('b')), producer.add('1', outcome('c'))];
  await turn();
  expect(sends.map((s) => [s.partition, s.requestIds])).toEqual([
    [0, ['a', 'b']],
    [1, ['c']],
  ]);
  sends.forEach((s) => s.land());
  await Promise.all(answered);
});

it('gathers what arrives while a partition’s job is in flight, and sends it as one job once that job has landed', async () => {
  const { queues, sends } = recorder();
  const producer = new BatchedProducer(queues);
  let firstAnswered = false;
  const first = producer.add('0', outcome('a')).then(() => (firstAnswered = true));
  await turn();
  expect(sends).toHaveLength(1);
  const later = ['b', 'c', 'd'].map((id) => producer.add('0', outcome(id)));
  await turn();
  await turn();
  expect(sends).toHaveLength(1); // nothing more while the first is on its way
  expect(firstAnswered).toBe(false); // and no answer before its own job landed
  sends[0]!.land();
  await first;
  await turn();
  expect(sends.map((s) => s.requestIds)).toEqual([['a'], ['b', 'c', 'd']]);
  sends[1]!.land();
  await Promise.all(later);
});

it('rejects the callers of a job Redis refused, and goes on with the next batch', async () => {
  const { queues, sends } = recorder();
  const producer = new BatchedProducer(queues);
  const refused = producer.add('0', outcome('a'));
  await turn();
  const next = producer.add('0', outcome('b'));
  sends[0]!.fail(new Error('Connection is closed.'));
  await expect(refused).rejects.toThrow('Connection is closed.');
  await turn();
  expect(sends.map((s) => s.requestIds)).toEqual([['a'], ['b']]);
  sends[1]!.land();
  await next;
});

it('sends a full batch at once, even with another in flight', async () => {
  const { queues, sends } = recorder();
  const producer = new BatchedProducer(queues, 2);
  void producer.add('0', outcome('a'));
  await turn();
  void producer.add('0', outcome('b'));
  void producer.add('0', outcome('c'));
  expect(sends.map((s) => s.requestIds)).toEqual([['a'], ['b', 'c']]);
});
