import { runBenchmark } from '../../scripts/bench-learning';
import { estimate, formatSweep, summarizeSweep } from '../../scripts/bench/sweep';

/** bench:learning --seeds: the summary over seeds (scripts/bench/sweep.ts). */
describe('estimate', () => {
  it('is null without values and has no interval for one value', () => {
    expect(estimate([])).toBeNull();
    const one = estimate([0.4])!;
    expect(one.mean).toBe(0.4);
    expect(one.halfWidth).toBeNaN();
    expect(one.count).toBe(1);
  });

  it('gives the mean and the Student-t 95% half-width', () => {
    const e = estimate([1, 2, 3])!;
    expect(e.mean).toBe(2);
    expect(e.halfWidth).toBeCloseTo(4.3 * Math.sqrt(1 / 3), 12); // sd 1, n 3, t(2 df) = 4.30
    expect(estimate(Array.from({ length: 40 }, (_, i) => i % 2))!.halfWidth).toBeCloseTo(1.96 * Math.sqrt(40 / 39 / 4 / 40), 12);
  });
});

describe('summarizeSweep', () => {
  const squareCB = { gammaScale: 100, gammaExponent: 0 };
  const seeds = [1, 2, 3];
  const runs = seeds.map((seed) => runBenchmark(seed, 12, 12, squareCB));

  it('averages each policy’s figures over the seeds, and pairs the engine with the baselines within each seed', () => {
    const summary = summarizeSweep(seeds, runs);
    const engine = runs.map((r) => r.engine.metrics.meanReward_1_10!);
    expect(summary.policies.engine.meanReward_1_10!.mean).toBeCloseTo((engine[0]! + engine[1]! + engine[2]!) / 3, 12);
    expect(summary.policies.oracle.meanReward_1_10!.count).toBe(3);
    // 12 interactions: no reward 11–40 over a full window, no drift: those figures do not exist.
    expect(summary.policies.engine.meanReward_11_40).toBeNull();
    expect(summary.policies.engine.driftRecovery).toBeNull();
    const cold = summary.differences.find((d) => d.metric === 'coldStartReward' && d.other === 'pooledThompson')!;
    const perSeed = runs.map((r) => r.engine.metrics.coldStartReward! - r.pooledThompson.metrics.coldStartReward!);
    expect(cold.difference!.mean).toBeCloseTo(perSeed.reduce((s, x) => s + x, 0) / 3, 12);
    expect(estimate(perSeed)).toEqual(cold.difference);
  });

  it('prints one row per policy and the paired differences with their sign', () => {
    const text = formatSweep(summarizeSweep(seeds, runs));
    for (const name of ['engine', 'random', 'epsilonGreedy', 'pooledThompson', 'squareCB', 'oracle'])
      expect(text).toMatch(new RegExp(`^${name} `, 'm'));
    expect(text).toMatch(/cold start 1–3 − pooledThompson: [+−]\d\.\d{3} ± \d\.\d{3}/);
  });
});
