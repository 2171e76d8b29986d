import { VerificationBusyError, VerificationGate } from '../../dashboard/auth/verification-gate';

/** A verification the test finishes when it likes. */
function pending() {
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { done, finish: () => finish() };
}

describe('the gate on password verifications', () => {
  it('runs one at a time, queues up to its limit, refuses the rest at once, and starts the next when one ends', async () => {
    const gate = new VerificationGate({ concurrency: 1, maxQueued: 2, maxWaitMs: 60_000 });
    const started: number[] = [];
    const runs = Array.from({ length: 5 }, () => pending());
    const results = runs.map((run, i) =>
      gate
        .run(async () => {
          started.push(i);
          await run.done;
          return i;
        })
        .catch((error: unknown) => error),
    );
    // Two beyond the queue are refused before anything finishes.
    expect(await results[3]).toBeInstanceOf(VerificationBusyError);
    expect(await results[4]).toBeInstanceOf(VerificationBusyError);
    expect(started).toEqual([0]);
    expect(gate.saturated).toBe(true);
    runs[0]!.finish();
    expect(await results[0]).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(started).toEqual([0, 1]);
    runs[1]!.finish();
    runs[2]!.finish();
    expect(await Promise.all(results.slice(1, 3))).toEqual([1, 2]);
    expect(started).toEqual([0, 1, 2]);
    expect(gate.saturated).toBe(false);
  });

  it('refuses a queued attempt whose wait ran out, and frees its turn when a verification throws', async () => {
    jest.useFakeTimers();
    try {
      const gate = new VerificationGate({ concurrency: 1, maxQueued: 4, maxWaitMs: 2000 });
      const first = pending();
      const running = gate.run(() => first.done);
      const waiting = gate.run(async () => 'late').catch((error: unknown) => error);
      jest.advanceTimersByTime(2000);
      expect(await waiting).toBeInstanceOf(VerificationBusyError);
      first.finish();
      await running;
      await expect(gate.run(() => Promise.reject(new Error('broken hash')))).rejects.toThrow('broken hash');
      await expect(gate.run(async () => 'next')).resolves.toBe('next');
    } finally {
      jest.useRealTimers();
    }
  });
});
