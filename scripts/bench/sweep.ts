import {
  CHOICE_METRICS,
  MAIN_METRICS,
  METRIC_LABELS,
  METRIC_NAMES,
  POLICY_NAMES,
  formatColumns,
  metricDigits,
  type MetricName,
  type PolicyName,
  type Results,
} from './report';
import { mean, sampleVariance } from './stats';

/**
 * `bench:learning --seeds A-B`: the benchmark over several seeds (each a different population,
 * with SquareCB tuned for it as in a single run), summarised as the mean over seeds with a 95%
 * confidence interval. One seed's figures move by about ±0.01 with the random stream alone, and
 * a small tenant's (tens of users) by much more, so a change to the engine is judged here, not
 * on one seed.
 */

/** Mean over the seeds where the figure exists, with the half-width of its 95% CI (Student t) and how many seeds it rests on. */
export interface Estimate {
  mean: number;
  halfWidth: number;
  count: number;
}

/** Two-sided 95% quantiles of Student's t for 1–30 degrees of freedom. */
const T95 = [
  12.71, 4.3, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.2, 2.18, 2.16, 2.14, 2.13, 2.12, 2.11, 2.1, 2.09, 2.09, 2.08, 2.07, 2.07,
  2.06, 2.06, 2.06, 2.05, 2.05, 2.05, 2.04,
];

/** Mean and 95% CI half-width of some values (NaN half-width for a single value); null for none. */
export function estimate(values: readonly number[]): Estimate | null {
  const count = values.length;
  if (count === 0) return null;
  if (count === 1) return { mean: mean(values), halfWidth: NaN, count };
  const t = T95[count - 2] ?? 1.96;
  return { mean: mean(values), halfWidth: t * Math.sqrt(sampleVariance(values) / count), count };
}

/** The comparisons made between the engine and a baseline, per seed, for the paired summary. */
export const SWEEP_COMPARISONS: ReadonlyArray<{ metric: MetricName; other: PolicyName }> = [
  { metric: 'meanReward_11_40', other: 'squareCB' },
  { metric: 'meanReward_11_40', other: 'pooledThompson' },
  { metric: 'coldStartReward', other: 'pooledThompson' },
  { metric: 'coldStartReward', other: 'squareCB' },
  { metric: 'bestFramingShareLast10', other: 'squareCB' },
  { metric: 'bestStyleShareLast10', other: 'squareCB' },
  { metric: 'bestComplexityShareLast10', other: 'squareCB' },
  { metric: 'bestEncouragementShareLast10', other: 'squareCB' },
  { metric: 'bestAllShareLast10', other: 'squareCB' },
];

export interface SweepSummary {
  seeds: number[];
  policies: Record<PolicyName, Record<MetricName, Estimate | null>>;
  /** engine − other per seed (same users, contexts and outcome noise within a seed). */
  differences: Array<{ metric: MetricName; other: PolicyName; difference: Estimate | null }>;
}

export function summarizeSweep(seeds: readonly number[], runs: readonly Results[]): SweepSummary {
  const valuesOf = (name: PolicyName, metric: MetricName) =>
    runs.map((r) => r[name].metrics[metric]).filter((x): x is number => x !== null && Number.isFinite(x));
  const policies = {} as SweepSummary['policies'];
  for (const name of POLICY_NAMES) {
    policies[name] = {} as Record<MetricName, Estimate | null>;
    for (const metric of METRIC_NAMES) policies[name][metric] = estimate(valuesOf(name, metric));
  }
  const differences = SWEEP_COMPARISONS.map(({ metric, other }) => {
    const diffs = runs.flatMap((r) => {
      const a = r.engine.metrics[metric];
      const b = r[other].metrics[metric];
      return a === null || b === null ? [] : [a - b];
    });
    return { metric, other, difference: estimate(diffs) };
  });
  return { seeds: [...seeds], policies, differences };
}

function formatEstimate(e: Estimate | null, digits: number, of: number, signed = false): string {
  if (e === null) return 'n/a';
  const sign = signed ? (e.mean >= 0 ? '+' : '−') : '';
  const magnitude = signed ? Math.abs(e.mean) : e.mean;
  const ci = Number.isFinite(e.halfWidth) ? ` ± ${e.halfWidth.toFixed(digits)}` : '';
  return `${sign}${magnitude.toFixed(digits)}${ci}${e.count < of ? ` (${e.count})` : ''}`;
}

/** The table: per policy and metric, mean over seeds ± 95% CI ("(k)": only k seeds have the figure). */
export function formatSweep(summary: SweepSummary): string {
  const of = summary.seeds.length;
  const table = (metrics: readonly MetricName[]) =>
    formatColumns(
      ['policy', ...metrics.map((m) => METRIC_LABELS[m])],
      POLICY_NAMES.map((name) => [name, ...metrics.map((m) => formatEstimate(summary.policies[name][m], metricDigits(m), of))]),
    );
  const lines = [...table(MAIN_METRICS), '', ...table(CHOICE_METRICS), '', 'engine − baseline, paired within each seed:'];
  for (const { metric, other, difference } of summary.differences) {
    lines.push(`  ${METRIC_LABELS[metric]} − ${other}: ${formatEstimate(difference, 3, of, true)}`);
  }
  return lines.join('\n');
}
