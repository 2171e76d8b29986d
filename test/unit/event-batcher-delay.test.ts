import { EventBatcher } from '../../worker/event-batcher';
import type { BatchItem } from '../../worker/handlers/event-batch';

/**
 * When the batcher flushes: a batch with an outcome after 2 ms (readers await outcomes), a
 * batch of decisions alone after 25 ms (nobody awaits a stored decision). The Postgres work is
 * replaced by a recorder of what would be applied and when: only the schedule is under test.
 */
type Applied = { at: number; kinds: string[] };

function batcher(applied: Applied[]): EventBatcher {
  const none = undefined as never;
  const b = new EventBatcher(none, none, none, none, none, none, none, 4000, 'secret', none);
  const recorder = async (batch: BatchItem[]) => {
    applied.push({ at: Date.now(), kinds: batch.map((item) => item.kind) });
    batch.forEach((item) => item.resolve('stored'));
  };
  Object.assign(b, { applyWithFallback: recorder });
  return b;
}

const decision = { kind: 'decision', data: {} } as Omit<BatchItem, 'resolve' | 'reject'>;
const outcome = { kind: 'outcome', data: {} } as Omit<BatchItem, 'resolve' | 'reject'>;

beforeEach(() => jest.useFakeTimers({ now: 0 }));
afterEach(() => jest.useRealTimers());

it('lets a batch of decisions alone collect for 25 ms', async () => {
  const applied: Applied[] = [];
  const b = batcher(applied);
  void b.submit(decision);
  await jest.advanceTimersByTimeAsync(10);
  void b.submit(decision);
  await jest.advanceTimersByTimeAsync(14);
  expect(applied).toEqual([]);
  await jest.advanceTimersByTimeAsync(1);
  expect(applied).toEqual([{ at: 25, kinds: ['decision', 'decision'] }]);
});

it('flushes 2 ms after an outcome joins, taking the waiting decisions along', async () => {
  const applied: Applied[] = [];
  const b = batcher(applied);
  void b.submit(decision);
  await jest.advanceTimersByTimeAsync(5);
  void b.submit(outcome);
  await jest.advanceTimersByTimeAsync(2);
  expect(applied).toEqual([{ at: 7, kinds: ['decision', 'outcome'] }]);
  // The next batch of decisions alone waits the long delay again.
  void b.submit(decision);
  await jest.advanceTimersByTimeAsync(24);
  expect(applied).toHaveLength(1);
  await jest.advanceTimersByTimeAsync(1);
  expect(applied[1]).toEqual({ at: 32, kinds: ['decision'] });
});
