import { pidCpuPercent, type CpuSnapshot } from '../../scripts/bench/cpu';
import { vsNoop } from '../../scripts/bench/worker-report';
import { cpuMsPerItem, lagSummary, meanBytes, paddedJobData, perSecond, throughputRatio } from '../../scripts/bench/worker-figures';

const snapshot = (ticks: Array<[number, number]>): CpuSnapshot => ({
  pids: new Map(ticks.map(([pid, t]) => [pid, { role: 'worker', ticks: t, forked: false }])),
  self: 0,
  busy: 0,
  irq: 0,
  steal: 0,
});

describe('bench:worker figures', () => {
  it('summarizes apply lags by nearest rank, whatever their order', () => {
    const lags = Array.from({ length: 200 }, (_, i) => 200 - i); // 200 … 1
    expect(lagSummary(lags)).toEqual({ count: 200, p50Ms: 100, p99Ms: 198, maxMs: 200 });
    expect(lagSummary([2.345])).toEqual({ count: 1, p50Ms: 2.35, p99Ms: 2.35, maxMs: 2.35 });
    const none = lagSummary([]);
    expect(none.count).toBe(0);
    expect(none.p99Ms).toBeNaN();
    expect(none.maxMs).toBeNaN();
  });

  it('divides our rate by the baseline, 0 when the baseline measured nothing', () => {
    expect(throughputRatio(426, 760)).toBe(0.56);
    expect(throughputRatio(1500, 1000)).toBe(1.5);
    expect(throughputRatio(5, 0)).toBe(0);
    expect(perSecond(4000, 2.6)).toBe(1538);
    expect(perSecond(10, 0)).toBe(10_000);
  });

  it("compares with the no-op in jobs, and turns its jobs/s into outcomes/s at the backlog's outcomes per job", () => {
    expect(vsNoop({ jobsPerSec: 269, accepted: 4000, jobs: 1213 }, { jobsPerSec: 749 })).toEqual({
      jobsPerSecRatio: 0.36,
      outcomesPerJob: 3.3,
      noopOutcomesPerSec: 2470,
    });
  });

  it('sizes a no-op job so that its JSON is as long as the mean of the sampled jobs', () => {
    expect(meanBytes([1000, 1201, 1400])).toBe(1200);
    expect(meanBytes([])).toBe(0);
    for (const bytes of [1220, 64, 5000]) {
      expect(Buffer.byteLength(JSON.stringify(paddedJobData('00000000000000ff', bytes)))).toBe(bytes);
    }
    // Shorter than a batch id alone: no padding, never a negative repeat.
    expect(paddedJobData('00000000000000ff', 10).pad).toBe('');
  });

  it('counts each process of a role on its own, a process started in between from zero', () => {
    const before = snapshot([[10, 500]]);
    const after = snapshot([
      [10, 700],
      [11, 150],
    ]);
    expect(pidCpuPercent(before, after, 2, [10, 11, 12])).toEqual([100, 75, 0]);
    // 75% of a core for 2 s over 1,000 items: 1.5 ms each.
    expect(cpuMsPerItem(75, 2, 1000)).toBe(1.5);
  });
});
