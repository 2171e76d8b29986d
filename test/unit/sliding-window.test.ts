import { remaining, resetAt, retryAfter, WINDOW_MICROS, type WindowState } from '../../shared/limits/sliding-window';

/** The X-RateLimit-* and Retry-After values derived from a key's sliding log. */
const second = 1_700_000_000;
const at = (seconds: number) => Math.round(seconds * WINDOW_MICROS);
const state = (counted: number, oldest: number, now: number, limit = 10): WindowState => ({
  limit,
  counted,
  oldestMicros: at(oldest),
  nowMicros: at(now),
});

describe('sliding window headers', () => {
  it('Remaining is the limit less the requests of the last second, never below 0', () => {
    expect(remaining(state(0, second, second))).toBe(10);
    expect(remaining(state(3, second, second))).toBe(7);
    expect(remaining(state(10, second, second))).toBe(0);
    expect(remaining(state(12, second, second))).toBe(0); // a lowered limit with an older, fuller log
  });

  it('Reset is the whole second, rounded up, when the oldest counted request leaves the window', () => {
    expect(resetAt(state(4, second + 0.2, second + 0.9))).toBe(second + 2); // leaves at +1.2
    expect(resetAt(state(4, second, second + 0.5))).toBe(second + 1); // leaves exactly at +1
    expect(resetAt(state(1, second + 0.000001, second + 0.000001))).toBe(second + 2);
  });

  it('Reset is now, rounded up, when nothing is counted', () => {
    expect(resetAt(state(0, 0, second + 0.3))).toBe(second + 1);
    expect(resetAt(state(0, 0, second))).toBe(second);
  });

  it('Retry-After is the whole seconds until the oldest counted request leaves, at least 1', () => {
    expect(retryAfter(state(10, second + 0.2, second + 0.9))).toBe(1); // admitted again at +1.2
    expect(retryAfter(state(10, second + 0.5, second + 0.5))).toBe(1);
    expect(retryAfter(state(10, second + 0.999999, second + 1))).toBe(1);
    // A clock that went back (entries from "the future") waits until they leave.
    expect(retryAfter(state(10, second + 2.5, second + 1))).toBe(3);
  });

  it('a request sent Retry-After seconds after a refusal finds the oldest request gone', () => {
    for (const [oldest, now] of [
      [0.0, 0.999999],
      [0.3, 0.31],
      [0.75, 1.2],
    ] as const) {
      const refused = state(10, second + oldest, second + now);
      expect(at(second + now) + retryAfter(refused) * WINDOW_MICROS).toBeGreaterThanOrEqual(at(second + oldest) + WINDOW_MICROS);
      expect(resetAt(refused) * WINDOW_MICROS).toBeGreaterThanOrEqual(at(second + oldest) + WINDOW_MICROS);
    }
  });
});
