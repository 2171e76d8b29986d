import { probabilityBest, type BetaParams } from '../../scripts/bench/beta-probability-best';
import { sampleBeta, seededRandom } from '../../shared/domain/random';

function monteCarlo(arms: readonly BetaParams[], draws: number, seed: number): number[] {
  const random = seededRandom(seed);
  const wins = new Array<number>(arms.length).fill(0);
  for (let d = 0; d < draws; d++) {
    let best = 0;
    let bestValue = -1;
    arms.forEach(({ alpha, beta }, i) => {
      const x = sampleBeta(alpha, beta, random);
      if (x > bestValue) {
        bestValue = x;
        best = i;
      }
    });
    wins[best]! += 1;
  }
  return wins.map((w) => w / draws);
}

const sum = (values: number[]) => values.reduce((s, v) => s + v, 0);

describe('probabilityBest', () => {
  it('returns [1] for a single arm', () => {
    expect(probabilityBest([{ alpha: 3, beta: 9 }])).toEqual([1]);
  });

  it('sums to 1 and each value is in [0,1]', () => {
    for (const arms of [
      [
        { alpha: 1, beta: 1 },
        { alpha: 1, beta: 1 },
      ],
      [
        { alpha: 5, beta: 5 },
        { alpha: 7, beta: 4 },
        { alpha: 3, beta: 6 },
      ],
      [
        { alpha: 100, beta: 1 },
        { alpha: 1, beta: 100 },
        { alpha: 2, beta: 2 },
        { alpha: 1.5, beta: 1.2 },
        { alpha: 9, beta: 9 },
      ],
    ]) {
      const p = probabilityBest(arms);
      expect(p).toHaveLength(arms.length);
      expect(sum(p)).toBeCloseTo(1, 9);
      for (const v of p) {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1);
      }
    }
  });

  it('gives identical arms identical probabilities', () => {
    const p = probabilityBest([
      { alpha: 1, beta: 1 },
      { alpha: 1, beta: 1 },
      { alpha: 1, beta: 1 },
      { alpha: 1, beta: 1 },
      { alpha: 1, beta: 1 },
    ]);
    for (const v of p) expect(v).toBeCloseTo(0.2, 6);
    const q = probabilityBest([
      { alpha: 4, beta: 9 },
      { alpha: 4, beta: 9 },
    ]);
    expect(q[0]).toBeCloseTo(0.5, 6);
  });

  it('puts nearly all mass on a clearly better arm', () => {
    const p = probabilityBest([
      { alpha: 90, beta: 10 },
      { alpha: 30, beta: 70 },
      { alpha: 50, beta: 50 },
    ]);
    expect(p[0]).toBeGreaterThan(0.99);
  });

  it('orders arms with equal counts by their means', () => {
    const p = probabilityBest([
      { alpha: 4, beta: 6 },
      { alpha: 6, beta: 4 },
      { alpha: 5, beta: 5 },
    ]);
    expect(p[1]).toBeGreaterThan(p[2]!);
    expect(p[2]).toBeGreaterThan(p[0]!);
  });

  it.each([
    [
      [
        { alpha: 5, beta: 5 },
        { alpha: 7, beta: 4 },
        { alpha: 3, beta: 6 },
      ],
    ],
    [
      [
        { alpha: 1, beta: 1 },
        { alpha: 2, beta: 1 },
      ],
    ],
    // small-count, skewed posteriors as the learner sees early on (a rewarded arm vs untried ones)
    [
      [
        { alpha: 10, beta: 2 },
        { alpha: 1, beta: 1 },
      ],
    ],
    [
      [
        { alpha: 12, beta: 3 },
        { alpha: 20, beta: 6 },
        { alpha: 2, beta: 1 },
        { alpha: 1, beta: 1 },
      ],
    ],
  ])('agrees with a 20k-draw Monte Carlo estimate within 0.02 (%j)', (arms) => {
    const exact = probabilityBest(arms);
    const estimate = monteCarlo(arms, 20_000, 2024);
    exact.forEach((p, i) => expect(Math.abs(p - estimate[i]!)).toBeLessThan(0.02));
  });
});
