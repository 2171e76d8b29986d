import { DECISION_FLUSH_DELAY_MS, EventBatcher, FLUSH_DELAY_MS } from '../../worker/event-batcher';
import type { BatchEvent, BatchItem } from '../../worker/phases/event-batch';

/**
 * When the batcher flushes: a batch with an outcome after FLUSH_DELAY_MS (readers await
 * outcomes), a batch of decisions alone after DECISION_FLUSH_DELAY_MS (nobody awaits a stored
 * decision). The Postgres work is
 * replaced by a recorder of what would be applied and when: only the schedule is under test.
 */
type Applied = { at: number; kinds: string[] };

function batcher(applied: Applied[]): EventBatcher {
  const none = undefined as never;
  const b = new EventBatcher({
    db: none,
    cache: none,
    populations: none,
    pendingOutcomes: none,
    learner: none,
    logger: none,
    maxBatch: 4000,
    secret: 'secret',
    metrics: none,
  });
  const recorder = async (batch: BatchItem[]) => {
    applied.push({ at: Date.now(), kinds: batch.map((item) => item.kind) });
    batch.forEach((item) => item.resolve('stored'));
  };
  Object.assign(b, { applyWithFallback: recorder });
  return b;
}

const decision = { kind: 'decision', data: {} } as BatchEvent;
const outcome = { kind: 'outcome', data: {} } as BatchEvent;

beforeEach(() => jest.useFakeTimers({ now: 0 }));
afterEach(() => jest.useRealTimers());

it('lets a batch of decisions alone collect for DECISION_FLUSH_DELAY_MS', async () => {
  const applied: Applied[] = [];
  const b = batcher(applied);
  void b.submit(decision);
  await jest.advanceTimersByTimeAsync(10);
  void b.submit(decision);
  await jest.advanceTimersByTimeAsync(DECISION_FLUSH_DELAY_MS - 11);
  expect(applied).toEqual([]);
  await jest.advanceTimersByTimeAsync(1);
  expect(applied).toEqual([{ at: DECISION_FLUSH_DELAY_MS, kinds: ['decision', 'decision'] }]);
});

it('flushes FLUSH_DELAY_MS after an outcome joins, taking the waiting decisions along', async () => {
  const applied: Applied[] = [];
  const b = batcher(applied);
  void b.submit(decision);
  await jest.advanceTimersByTimeAsync(5);
  void b.submit(outcome);
  await jest.advanceTimersByTimeAsync(FLUSH_DELAY_MS);
  expect(applied).toEqual([{ at: 5 + FLUSH_DELAY_MS, kinds: ['decision', 'outcome'] }]);
  // The next batch of decisions alone waits the long delay again.
  void b.submit(decision);
  await jest.advanceTimersByTimeAsync(DECISION_FLUSH_DELAY_MS - 1);
  expect(applied).toHaveLength(1);
  await jest.advanceTimersByTimeAsync(1);
  expect(applied[1]).toEqual({ at: 5 + FLUSH_DELAY_MS + DECISION_FLUSH_DELAY_MS, kinds: ['decision'] });
});
