import { sampleBeta, sampleGamma, seededRandom } from '../../shared/domain/random';

const draw = (seed: number, count: number) => {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () => random());
};

describe('seededRandom', () => {
  it('repeats the same sequence for the same seed', () => {
    expect(draw(42, 100)).toEqual(draw(42, 100));
  });

  it('gives different sequences for different seeds', () => {
    expect(draw(42, 10)).not.toEqual(draw(43, 10));
    expect(draw(0, 10)).not.toEqual(draw(1, 10));
  });

  it('yields values in [0,1) with mean about 1/2', () => {
    const values = draw(7, 20_000);
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    const mean = values.reduce((s, v) => s + v, 0) / values.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.01);
    expect(new Set(values).size).toBeGreaterThan(19_900);
  });
});

describe('sampleBeta', () => {
  it.each([
    [2, 5],
    [1, 1],
    [30, 10],
    [0.5, 0.5],
  ])('Beta(%d,%d) has mean α/(α+β) within 0.01 over 20k draws', (alpha, beta) => {
    const random = seededRandom(1234);
    let sum = 0;
    let sumSq = 0;
    let outside = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const x = sampleBeta(alpha, beta, random);
      if (!(x >= 0 && x <= 1)) outside += 1;
      sum += x;
      sumSq += x * x;
    }
    expect(outside).toBe(0);
    const mean = sum / n;
    const variance = sumSq / n - mean * mean;
    const expectedMean = alpha / (alpha + beta);
    const expectedVariance = (alpha * beta) / ((alpha + beta) ** 2 * (alpha + beta + 1));
    expect(Math.abs(mean - expectedMean)).toBeLessThan(0.01);
    expect(Math.abs(variance - expectedVariance) / expectedVariance).toBeLessThan(0.05);
  });

  it('is deterministic given a seed', () => {
    const a = seededRandom(9);
    const b = seededRandom(9);
    for (let i = 0; i < 50; i++) expect(sampleBeta(3, 4, a)).toBe(sampleBeta(3, 4, b));
  });
});

describe('sampleGamma', () => {
  it.each([0.1, 0.3, 0.9])('with shape %d < 1 is positive and has mean ≈ shape', (shape) => {
    const random = seededRandom(77);
    let sum = 0;
    let invalid = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const x = sampleGamma(shape, random);
      if (!(x > 0 && Number.isFinite(x))) invalid += 1;
      sum += x;
    }
    expect(invalid).toBe(0);
    expect(Math.abs(sum / n - shape) / shape).toBeLessThan(0.05);
  });

  it('with shape ≥ 1 has mean ≈ shape', () => {
    const random = seededRandom(5);
    let sum = 0;
    for (let i = 0; i < 20_000; i++) sum += sampleGamma(4, random);
    expect(Math.abs(sum / 20_000 - 4)).toBeLessThan(0.08);
  });
});
