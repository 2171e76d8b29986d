import { retryDelay } from '../../shared/jobs/retry';

describe('retryDelay', () => {
  const schedule = { baseMs: 1000, maxMs: 30_000 };
  const noJitter = () => 0;

  it('doubles from the first delay and stops growing at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => retryDelay(schedule, n, noJitter))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });

  it('stays at the cap however many attempts failed (an outage of any length is retried)', () => {
    expect(retryDelay(schedule, 1_000, noJitter)).toBe(30_000);
    expect(retryDelay(schedule, 2 ** 31 - 2, noJitter)).toBe(30_000);
  });

  it('takes up to a fifth off at random, so a backlog that failed together comes back spread out', () => {
    expect(retryDelay(schedule, 10, () => 0.999_999)).toBe(24_000);
    expect(retryDelay(schedule, 2, () => 0.5)).toBe(1800);
  });
});
