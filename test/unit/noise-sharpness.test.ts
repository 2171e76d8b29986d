import { noiseSharpness } from '../../shared/domain/engine/noise-sharpness';
import { probabilityLargest } from '../../shared/domain/engine/normal';
import { seededRandom, standardNormal } from '../../shared/domain/random';

/** s₀(k, ψ) drawn again: the mean sharpness of popBest for k alike values whose means scatter by ψ standard errors. */
function drawn(k: number, share: number, draws: number, seed: number): number {
  const random = seededRandom(seed);
  const means = new Float64Array(k);
  const sds = new Float64Array(k).fill(1);
  let total = 0;
  for (let t = 0; t < draws; t++) {
    for (let i = 0; i < k; i++) means[i] = share * standardNormal(random);
    const p = Array.from(means, (_, i) => Math.max(1e-4, probabilityLargest(i, means, sds, k)));
    const sum = p.reduce((a, b) => a + b, 0);
    const agree = p.reduce((a, b) => a + (b / sum) ** 2, 0);
    total += (agree - 1 / k) / (1 - 1 / k);
  }
  return total / draws;
}

describe('the sharpness noise alone gives the population’s favourite', () => {
  it('matches the table where drawn again', () => {
    // 3,000 draws: a standard error of about 0.004.
    for (const [k, share] of [
      [4, 1],
      [3, 0.5],
      [5, 0.75],
    ] as const) {
      expect(Math.abs(noiseSharpness(k, share) - drawn(k, share, 3000, 7 * k))).toBeLessThan(0.015);
    }
  });

  it('is none without scatter, grows with it and falls with more values', () => {
    expect(noiseSharpness(4, 0)).toBe(0);
    for (const k of [2, 3, 4, 5]) {
      for (let share = 0.05; share <= 1; share += 0.05) expect(noiseSharpness(k, share)).toBeGreaterThan(noiseSharpness(k, share - 0.05));
      if (k > 2) expect(noiseSharpness(k, 1)).toBeLessThan(noiseSharpness(k - 1, 1));
    }
    // Clamped: a share above 1 reads as 1.
    expect(noiseSharpness(4, 1.5)).toBe(noiseSharpness(4, 1));
    expect(noiseSharpness(1, 0.5)).toBe(0);
    expect(() => noiseSharpness(6, 0.5)).toThrow();
  });
});
