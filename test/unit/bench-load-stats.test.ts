import { steadyP99LimitMs, poolCpu, poolRuns, rateRatio, summarize, type LoadRun } from '../../scripts/bench/load-stats';

const run = (ok: number, seconds: number, latenciesMs: number[] = [], extra: Partial<LoadRun> = {}): LoadRun => ({
  ok,
  non2xx: 0,
  errors: 0,
  timeouts: 0,
  seconds,
  latenciesMs,
  statusCodes: { 200: ok },
  ...extra,
});

describe('bench:load statistics', () => {
  it('rates a side by its answers over its seconds summed over every round, not by the mean of round ratios', () => {
    // Bare: 1,000/s then 3,000/s; subject: 500/s then 600/s.
    const bare = [run(10_000, 10), run(30_000, 10)];
    const subject = [run(5_000, 10), run(6_000, 10)];
    expect(rateRatio(subject, bare)).toBe(0.28); // 11,000 / 40,000; the mean of 0.5 and 0.2 would be 0.35
    expect(rateRatio([subject[0]!], [bare[0]!])).toBe(0.5);
  });

  it('weights rounds of different lengths by their seconds', () => {
    expect(rateRatio([run(1_000, 1), run(1_000, 3)], [run(4_000, 4)])).toBe(0.5);
    expect(rateRatio([run(10, 1)], [run(0, 1)])).toBe(0);
  });

  it('pools rounds: counts and seconds add up, percentiles span every latency, the worst send lag stays', () => {
    const pooled = poolRuns([
      run(2, 1, [1, 2], { maxSendLagMs: 0.5, statusCodes: { 200: 2, 503: 1 }, non2xx: 1 }),
      run(2, 2, [30, 40], { maxSendLagMs: 3 }),
    ]);
    expect(pooled).toMatchObject({ ok: 4, non2xx: 1, seconds: 3, maxSendLagMs: 3, statusCodes: { 200: 4, 503: 1 } });
    expect(summarize(pooled)).toMatchObject({ rps: 1, p50: 2, p99: 40 });
  });

  it('pools the CPU of rounds weighted by their length', () => {
    const cpu = poolCpu([
      { cpu: { api: 100, redis: 10 }, seconds: 1 },
      { cpu: { api: 40, worker: 30 }, seconds: 3 },
    ]);
    expect(cpu).toEqual({ cpu: { api: 55, redis: 3, worker: 23 }, seconds: 4 });
  });

  it('holds the steady-load p99 to 5 ms, or 1.5 × the bare p99 at the same rate when that is more', () => {
    expect(steadyP99LimitMs(2)).toBe(5);
    expect(steadyP99LimitMs(6)).toBe(9);
  });
});
