import { mean, percentile, sampleSd, sampleVariance } from '../../scripts/bench/stats';

describe('bench statistics', () => {
  it('nearest-rank percentile: the smallest value with at least p% at or below it', () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(percentile(sorted, 50)).toBe(5);
    expect(percentile(sorted, 99)).toBe(10);
    expect(percentile(sorted, 10)).toBe(1);
    expect(percentile(sorted, 11)).toBe(2);
    expect(percentile(Float64Array.from([3]), 99)).toBe(3);
    expect(percentile([], 50)).toBeNaN();
  });

  it('mean and the sample (n − 1) variance and standard deviation', () => {
    expect(mean([1, 2, 3, 6])).toBe(3);
    expect(mean([])).toBeNaN();
    expect(sampleVariance([1, 2, 3, 6])).toBeCloseTo(14 / 3, 12);
    expect(sampleSd([2, 4])).toBeCloseTo(Math.SQRT2, 12);
    expect(sampleVariance([5])).toBe(0);
  });
});
