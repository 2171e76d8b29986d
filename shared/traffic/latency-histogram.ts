/**
 * A fixed log-scale latency histogram: bucket i holds durations up to `FIRST_BOUND_MS × √2^i`,
 * the last bucket everything slower. Fixed bounds make histograms of any keys, minutes and hours
 * merge exactly by adding counts; a percentile read from them is within a factor √2^½ (±19 %) of
 * the true one, which is what a dashboard's p50/p95 needs.
 */
export const LATENCY_BUCKETS = 40;
const FIRST_BOUND_MS = 0.05;

/** Upper bound (ms) of bucket `index`; the last bucket has none (Infinity). */
export function bucketUpperMs(index: number): number {
  return index >= LATENCY_BUCKETS - 1 ? Infinity : FIRST_BOUND_MS * Math.SQRT2 ** index;
}

export function latencyBucket(ms: number): number {
  if (!(ms > FIRST_BOUND_MS)) return 0;
  return Math.min(LATENCY_BUCKETS - 1, Math.ceil(2 * Math.log2(ms / FIRST_BOUND_MS) - 1e-9));
}

/** A bucket's representative value: the geometric middle of its bounds. */
function bucketMiddleMs(index: number): number {
  if (index === 0) return FIRST_BOUND_MS;
  const lower = bucketUpperMs(index - 1);
  return index >= LATENCY_BUCKETS - 1 ? lower : Math.sqrt(lower * bucketUpperMs(index));
}

/** Counts per bucket index (sparse). */
export type Histogram = ReadonlyMap<number, number>;

/** The q-quantile (0 < q ≤ 1) of a histogram in ms, to 3 significant digits; null when it is empty. */
export function percentileMs(histogram: Histogram, q: number): number | null {
  let total = 0;
  for (const count of histogram.values()) total += count;
  if (total <= 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const index of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(index)!;
    if (seen >= rank) return Number(bucketMiddleMs(index).toPrecision(3));
  }
  return null;
}
