import { fastNormalCdf, normalCdf, probabilityLargest } from '../../shared/domain/engine/normal';
import { seededRandom, standardNormal } from '../../shared/domain/random';

/** Reference values of Φ (from the error function, to 16 digits). */
const PHI: Array<[number, number]> = [
  [0, 0.5],
  [0.5, 0.6914624612740131],
  [1, 0.8413447460685429],
  [1.644853626951472, 0.95],
  [1.96, 0.9750021048517795],
  [3, 0.9986501019683699],
  [-2.326347874040841, 0.01],
];

const { cos, log, sqrt, PI } = Math; // local: global lookups are slow in Jest's sandbox

/** Share of `draws` Monte Carlo draws of independent N(mean_j, sd_j²) arms in which each arm is the largest. */
function monteCarloLargest(means: number[], sds: number[], draws: number, seed: number): number[] {
  const random = seededRandom(seed);
  const wins = new Array<number>(means.length).fill(0);
  for (let d = 0; d < draws; d++) {
    let best = 0;
    let bestValue = -Infinity;
    for (let j = 0; j < means.length; j++) {
      const z = sqrt(-2 * log(1 - random())) * cos(2 * PI * random()); // Box–Muller
      const x = means[j]! + sds[j]! * z;
      if (x > bestValue) {
        bestValue = x;
        best = j;
      }
    }
    wins[best]! += 1;
  }
  return wins.map((w) => w / draws);
}

const allLargest = (means: number[], sds: number[]) => means.map((_, i) => probabilityLargest(i, means, sds));
const sum = (values: number[]) => values.reduce((s, v) => s + v, 0);

describe('normalCdf', () => {
  it.each(PHI)('Φ(%p) = %p to 1e-7', (x, expected) => {
    expect(Math.abs(normalCdf(x) - expected)).toBeLessThan(1e-7);
  });

  it('is symmetric: Φ(x) + Φ(−x) = 1', () => {
    for (const x of [0.1, 0.7, 1.3, 2.2, 4, 7.5]) expect(normalCdf(x) + normalCdf(-x)).toBeCloseTo(1, 12);
  });

  it('has accurate tails (relative error < 1e-6) and saturates far out', () => {
    expect(normalCdf(-5) / 2.866515718791939e-7).toBeCloseTo(1, 6);
    expect(normalCdf(-8) / 6.220960574271785e-16).toBeCloseTo(1, 6);
    expect(normalCdf(40)).toBe(1);
    expect(normalCdf(-40)).toBe(0);
  });

  it('is increasing', () => {
    let previous = 0;
    for (let x = -6; x <= 6; x += 0.05) {
      const value = normalCdf(x);
      expect(value).toBeGreaterThanOrEqual(previous);
      previous = value;
    }
  });
});

describe('fastNormalCdf', () => {
  it('agrees with normalCdf to 1e-5 on [-8, 8] and clamps to 0 and 1 outside', () => {
    for (let x = -8; x <= 8; x += 0.013) expect(Math.abs(fastNormalCdf(x) - normalCdf(x))).toBeLessThan(1e-5);
    expect(fastNormalCdf(-9)).toBe(0);
    expect(fastNormalCdf(9)).toBe(1);
  });
});

describe('standardNormal', () => {
  it('draws mean 0 and variance 1 (40k seeded draws)', () => {
    const random = seededRandom(17);
    let s = 0;
    let ss = 0;
    const draws = 40_000;
    for (let i = 0; i < draws; i++) {
      const x = standardNormal(random);
      s += x;
      ss += x * x;
    }
    expect(Math.abs(s / draws)).toBeLessThan(0.02);
    expect(Math.abs(ss / draws - 1)).toBeLessThan(0.03);
  });
});

describe('probabilityLargest', () => {
  it('is 1 for a single arm', () => {
    expect(probabilityLargest(0, [0.3], [0.1])).toBe(1);
  });

  it('sums to 1 over the arms', () => {
    const cases: Array<[number[], number[]]> = [
      [
        [0.5, 0.6],
        [0.1, 0.2],
      ],
      [
        [0.2, 0.5, 0.45, 0.9, 0.1],
        [0.3, 0.05, 0.1, 0.4, 0.02],
      ],
      [
        [0.7, 0.7, 0.3],
        [0.01, 0.3, 0.2],
      ],
    ];
    for (const [means, sds] of cases) expect(Math.abs(sum(allLargest(means, sds)) - 1)).toBeLessThan(2e-3);
  });

  it('equals the closed form Φ((m1 − m2)/√(s1² + s2²)) for two arms, to 1e-3, for spread ratios up to 20', () => {
    for (const s1 of [0.02, 0.1, 0.3, 1]) {
      for (const s2 of [0.05, 0.1, 0.4]) {
        if (Math.max(s1 / s2, s2 / s1) > 20) continue;
        for (const m1 of [-0.5, -0.1, 0, 0.03, 0.2, 0.8]) {
          const exact = normalCdf(m1 / Math.hypot(s1, s2));
          expect(Math.abs(probabilityLargest(0, [m1, 0], [s1, s2]) - exact)).toBeLessThan(1e-3);
          expect(Math.abs(probabilityLargest(1, [m1, 0], [s1, s2]) - (1 - exact))).toBeLessThan(1e-3);
        }
      }
    }
  });

  it('matches a seeded 50k-draw Monte Carlo estimate for 5 arms within 0.01', () => {
    const means = [0.42, 0.5, 0.47, 0.3, 0.55];
    const sds = [0.1, 0.05, 0.2, 0.35, 0.08];
    const exact = allLargest(means, sds);
    const estimate = monteCarloLargest(means, sds, 50_000, 2024);
    exact.forEach((p, i) => expect(Math.abs(p - estimate[i]!)).toBeLessThan(0.01));
    // Not trivially uniform: the arms differ clearly.
    expect(Math.max(...exact) - Math.min(...exact)).toBeGreaterThan(0.1);
  });

  it('gives k identical arms 1/k each', () => {
    for (const k of [2, 3, 5]) {
      const p = allLargest(new Array<number>(k).fill(0.4), new Array<number>(k).fill(0.2));
      for (const v of p) expect(v).toBeCloseTo(1 / k, 3);
    }
  });

  it('reads only the first `count` entries of longer buffers (as the engine passes them)', () => {
    const means = Float64Array.from([0.6, 0.5, 0.4, 99]);
    const sds = Float64Array.from([0.1, 0.1, 0.1, 0.001]);
    const p = [0, 1, 2].map((i) => probabilityLargest(i, means, sds, 3));
    expect(sum(p)).toBeCloseTo(1, 2);
    expect(p[0]).toBeGreaterThan(p[1]!);
    expect(p[1]).toBeGreaterThan(p[2]!);
    expect(p).toEqual(allLargest([0.6, 0.5, 0.4], [0.1, 0.1, 0.1]));
  });

  it('puts almost all mass on an arm far ahead of the others and stays within [0, 1]', () => {
    const means = [0.9, 0.2, 0.3];
    const sds = [0.02, 0.02, 0.03];
    expect(probabilityLargest(0, means, sds)).toBeGreaterThan(0.999);
    for (const i of [1, 2]) {
      expect(probabilityLargest(i, means, sds)).toBeGreaterThanOrEqual(0);
      expect(probabilityLargest(i, means, sds)).toBeLessThan(1e-6);
    }
  });
});
