import { untilReady, type Readiness } from '../../shared/health/readiness';

const status = (ready: boolean): Readiness => ({
  ready,
  checks: { redis: ready ? 'ok' : 'unavailable', postgres: 'ok' },
});

/** A check that reports not ready `notReadyFor` times, then ready; it counts its calls. */
const checkReadyAfter = (notReadyFor: number) => {
  const check = Object.assign(async () => status(check.calls++ >= notReadyFor), { calls: 0 });
  return check;
};

describe('untilReady', () => {
  it('resolves true at the first check that passes, polling until then', async () => {
    const check = checkReadyAfter(3);
    await expect(untilReady(check, { timeoutMs: 5_000, intervalMs: 1 })).resolves.toBe(true);
    expect(check.calls).toBe(4);
  });

  it('does not wait when the first check passes', async () => {
    const check = checkReadyAfter(0);
    const started = Date.now();
    await expect(untilReady(check, { timeoutMs: 5_000, intervalMs: 1_000 })).resolves.toBe(true);
    expect(check.calls).toBe(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('resolves false once the time is up, after a last check', async () => {
    jest.useFakeTimers();
    try {
      const check = checkReadyAfter(Number.POSITIVE_INFINITY);
      const outcome = untilReady(check, { timeoutMs: 60, intervalMs: 20 });
      await jest.advanceTimersByTimeAsync(60);
      await expect(outcome).resolves.toBe(false);
      expect(check.calls).toBe(4); // at 0, 20, 40 and 60 ms
    } finally {
      jest.useRealTimers();
    }
  });
});
