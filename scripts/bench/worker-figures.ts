import { mean, percentile } from './stats';

/**
 * The arithmetic bench:worker does on what it measured: the apply-lag summary, the ratio to the
 * no-op baseline, the no-op jobs' payload size. Pure, so it is unit-tested.
 */

const round2 = (n: number) => Math.round(n * 100) / 100;

export interface LagSummary {
  /** Outcomes measured. */
  count: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Nearest-rank p50 and p99 and the largest of the lags given (ms); NaN for none. */
export function lagSummary(lagsMs: readonly number[]): LagSummary {
  const sorted = Float64Array.from(lagsMs).sort();
  return {
    count: sorted.length,
    p50Ms: round2(percentile(sorted, 50)),
    p99Ms: round2(percentile(sorted, 99)),
    maxMs: round2(sorted.length > 0 ? sorted[sorted.length - 1]! : NaN),
  };
}

/** `subject ÷ baseline` to two decimals; 0 when the baseline measured nothing. */
export function throughputRatio(subject: number, baseline: number): number {
  return baseline > 0 ? round2(subject / baseline) : 0;
}

/** Items per second over `seconds`, whole. */
export const perSecond = (items: number, seconds: number): number => Math.round(items / Math.max(0.001, seconds));

/** The mean of byte sizes, whole; 0 for none. */
export const meanBytes = (sizes: readonly number[]): number => (sizes.length > 0 ? Math.round(mean(sizes)) : 0);

/** ms of CPU per item of a process that used `percentOfOneCore` for `seconds` (as costPer counts a role). */
export const cpuMsPerItem = (percentOfOneCore: number, seconds: number, items: number): number =>
  Math.round(((percentOfOneCore * 10 * seconds) / Math.max(1, items)) * 1000) / 1000;

/**
 * A no-op job's data: a batch id (as our jobs carry) and padding, so that its JSON, which is
 * what BullMQ stores, is `bytes` long (or as short as it can be, when `bytes` is less).
 */
export function paddedJobData(batchId: string, bytes: number): { batchId: string; pad: string } {
  const bare = Buffer.byteLength(JSON.stringify({ batchId, pad: '' }));
  return { batchId, pad: 'x'.repeat(Math.max(0, bytes - bare)) };
}
