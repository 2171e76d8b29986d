/** The few statistics the benchmarks share: one definition each. */

/** Arithmetic mean; NaN for no values. */
export function mean(xs: ArrayLike<number>): number {
  if (xs.length === 0) return NaN;
  let sum = 0;
  for (let i = 0; i < xs.length; i++) sum += xs[i]!;
  return sum / xs.length;
}

/** Sample variance (divided by n − 1); 0 for fewer than two values. */
export function sampleVariance(xs: ArrayLike<number>): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  let sum = 0;
  for (let i = 0; i < xs.length; i++) sum += (xs[i]! - m) * (xs[i]! - m);
  return sum / (xs.length - 1);
}

/** Sample standard deviation (n − 1); 0 for fewer than two values. */
export const sampleSd = (xs: ArrayLike<number>): number => Math.sqrt(sampleVariance(xs));

/**
 * Nearest-rank percentile `p` (0–100] of values sorted ascending: the smallest value with at
 * least p% of the values at or below it. NaN for no values.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
