import fc from 'fast-check';
import { bucketUpperMs, LATENCY_BUCKETS, latencyBucket, percentileMs } from '../../shared/traffic/latency-histogram';
import { trafficStatus } from '../../shared/traffic/traffic-fields';

const histogramOf = (values: number[]) => {
  const histogram = new Map<number, number>();
  for (const ms of values) histogram.set(latencyBucket(ms), (histogram.get(latencyBucket(ms)) ?? 0) + 1);
  return histogram;
};

const exactPercentile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.max(1, Math.ceil(q * values.length)) - 1]!;

describe('latency histogram', () => {
  it('puts each duration in the bucket whose bounds hold it', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.051, max: 20_000, noNaN: true }), (ms) => {
        const bucket = latencyBucket(ms);
        expect(ms).toBeLessThanOrEqual(bucketUpperMs(bucket) * (1 + 1e-9));
        expect(ms).toBeGreaterThan(bucketUpperMs(bucket - 1) * (1 - 1e-9));
      }),
    );
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(10 * 60_000)).toBe(LATENCY_BUCKETS - 1);
  });

  it('reads p50 and p95 within ±19 % of the exact values', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.1, max: 5000, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.constantFrom(0.5, 0.95),
        (values, q) => {
          const estimate = percentileMs(histogramOf(values), q)!;
          const exact = exactPercentile(values, q);
          // Half a bucket (a factor 2^¼) either way, plus the 3-digit rounding.
          expect(estimate / exact).toBeGreaterThanOrEqual(2 ** -0.25 * 0.995);
          expect(estimate / exact).toBeLessThanOrEqual(2 ** 0.25 * 1.005);
        },
      ),
    );
  });

  it('merges exactly: the sum of two histograms is the histogram of both samples', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 5000, noNaN: true })),
        fc.array(fc.double({ min: 0, max: 5000, noNaN: true })),
        (a, b) => {
          const merged = histogramOf(a);
          for (const [bucket, count] of histogramOf(b)) merged.set(bucket, (merged.get(bucket) ?? 0) + count);
          expect(merged).toEqual(histogramOf([...a, ...b]));
        },
      ),
    );
  });

  it('has no percentile without requests', () => {
    expect(percentileMs(new Map(), 0.5)).toBeNull();
  });
});

describe('recorded status', () => {
  it.each([
    [200, '2xx'],
    [204, '2xx'],
    [304, '3xx'],
    [401, '401'],
    [403, '403'],
    [429, '429'],
    [404, '4xx'],
    [503, '5xx'],
  ])('%i is recorded as %s', (status, recorded) => {
    expect(trafficStatus(status)).toBe(recorded);
  });
});
