import { pairedDifference, type PolicyMetrics, type PolicyResult } from './run';

export const POLICY_NAMES = ['engine', 'random', 'epsilonGreedy', 'pooledThompson', 'squareCB', 'oracle'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];
export type Results = Record<PolicyName, PolicyResult>;

/** Each policy's metrics in one world. */
export function policiesJson(results: Results): Record<PolicyName, PolicyMetrics> {
  const policies = {} as Record<PolicyName, PolicyMetrics>;
  for (const name of POLICY_NAMES) policies[name] = results[name].metrics;
  return policies;
}

/**
 * The one JSON object `--json` prints: the first world's policies at the top level (the
 * default world unless --world names another), and every world's under `worlds`.
 */
export function toJson(seed: number, users: number, worlds: ReadonlyArray<{ world: string; results: Results }>) {
  const byWorld: Record<string, { policies: Record<PolicyName, PolicyMetrics> }> = {};
  for (const { world, results } of worlds) byWorld[world] = { policies: policiesJson(results) };
  return { seed, users, world: worlds[0]!.world, policies: policiesJson(worlds[0]!.results), worlds: byWorld };
}

/** A metric for a table: `digits` decimals, 'n/a' where it does not apply. */
export const fmt = (x: number | null, digits = 3) => (x === null || !Number.isFinite(x) ? 'n/a' : x.toFixed(digits));

export type MetricName = keyof PolicyMetrics;
/** Column labels of the metrics, in every benchmark table. */
export const METRIC_LABELS: Record<MetricName, string> = {
  meanReward_1_10: 'reward 1–10',
  meanReward_11_40: 'reward 11–40',
  meanReward_41_80: 'reward 41–80',
  bestFramingShareLast10: 'best framing 31–40',
  coldStartReward: 'cold start 1–3',
  driftRecovery: 'drift recovery',
  ece: 'ECE',
  bestStyleShareLast10: 'best style 31–40',
  bestComplexityShareLast10: 'best complexity handling 31–40',
  bestEncouragementShareLast10: 'best encouragement 31–40',
  bestAllShareLast10: 'best on all four 31–40',
  exploredShare_1_10: 'explored 1–10',
  exploredShare_31_40: 'explored 31–40',
  exploredShare_71_80: 'explored 71–80',
};
/** The metrics in table order (METRIC_LABELS's). */
export const METRIC_NAMES = Object.keys(METRIC_LABELS) as readonly MetricName[];
/** The second table's metrics: what each dimension's pick got right late in the first 40, and how often the policy explored. */
export const CHOICE_METRICS: readonly MetricName[] = [
  'bestFramingShareLast10',
  'bestStyleShareLast10',
  'bestComplexityShareLast10',
  'bestEncouragementShareLast10',
  'bestAllShareLast10',
  'exploredShare_1_10',
  'exploredShare_31_40',
  'exploredShare_71_80',
];
/** The first table's metrics: rewards, drift and calibration. */
export const MAIN_METRICS: readonly MetricName[] = METRIC_NAMES.filter(
  (m) => m === 'bestFramingShareLast10' || !CHOICE_METRICS.includes(m),
);
/** Decimals a metric is printed with: interactions to one, rewards, shares and ECE to three. */
export const metricDigits = (metric: MetricName): number => (metric === 'driftRecovery' ? 1 : 3);

/**
 * The lines of a text table: the header, a rule, then the rows; each column as wide as its
 * widest cell, the first left-aligned and the others right-aligned.
 */
export function formatColumns(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

export interface TargetCheck {
  target: string;
  value: string;
  pass: boolean;
}

/** "difference +0.012 ± 0.009" of the engine's per-user means against another policy's. */
function differenceNote(results: Results, other: PolicyName, pick: (r: PolicyResult) => number[]): string {
  const a = pick(results.engine);
  const b = pick(results[other]);
  if (a.length === 0 || a.length !== b.length) return '';
  const { mean, halfWidth } = pairedDifference(a, b);
  return ` (difference ${mean >= 0 ? '+' : '−'}${Math.abs(mean).toFixed(3)} ± ${halfWidth.toFixed(3)}, 95% CI over users)`;
}

/** The engine's targets in every world, checked. */
export function checkTargets(results: Results): TargetCheck[] {
  const e = results.engine.metrics;
  const sq = results.squareCB.metrics;
  const r1140 = (name: PolicyName) => results[name].metrics.meanReward_11_40 ?? NaN;
  const engine1140 = r1140('engine');
  const ratio = (other: PolicyName) => engine1140 / r1140(other);
  const ahead = (metric: MetricName) => ({
    value: `${fmt(e[metric])} vs ${fmt(sq[metric])}`,
    pass: (e[metric] ?? -Infinity) > (sq[metric] ?? Infinity),
  });
  return [
    {
      target: 'mean reward 11–40 > SquareCB',
      value: `${fmt(ratio('squareCB'))} ×${differenceNote(results, 'squareCB', (r) => r.perUser.reward11to40)}`,
      pass: ratio('squareCB') > 1,
    },
    { target: 'best framing 31–40 > SquareCB', ...ahead('bestFramingShareLast10') },
    { target: 'best style 31–40 > SquareCB', ...ahead('bestStyleShareLast10') },
    { target: 'best complexity handling 31–40 > SquareCB', ...ahead('bestComplexityShareLast10') },
    { target: 'best encouragement 31–40 > SquareCB', ...ahead('bestEncouragementShareLast10') },
    { target: 'best on all four dimensions 31–40 > SquareCB', ...ahead('bestAllShareLast10') },
    { target: 'mean reward 11–40 ≥ 1.05 × ε-greedy', value: `${fmt(ratio('epsilonGreedy'))} ×`, pass: ratio('epsilonGreedy') >= 1.05 },
    {
      target: 'mean reward 11–40 ≥ 1.05 × pooled Thompson',
      value: `${fmt(ratio('pooledThompson'))} ×`,
      pass: ratio('pooledThompson') >= 1.05,
    },
    {
      target: 'cold-start reward ≥ pooled Thompson',
      value: `${fmt(e.coldStartReward)} vs ${fmt(results.pooledThompson.metrics.coldStartReward)}${differenceNote(
        results,
        'pooledThompson',
        (r) => r.perUser.coldStart,
      )}`,
      pass: (e.coldStartReward ?? -1) >= (results.pooledThompson.metrics.coldStartReward ?? Infinity),
    },
    {
      target: 'recovery after drift ≤ 20 interactions',
      value: e.driftRecovery === null ? 'not recovered' : fmt(e.driftRecovery, 1),
      pass: e.driftRecovery !== null && e.driftRecovery <= 20,
    },
    { target: 'calibration error (ECE) ≤ 0.10', value: fmt(e.ece), pass: e.ece !== null && e.ece <= 0.1 },
  ];
}

/** The second table's rows: per policy, the CHOICE_METRICS. */
const choiceRows = (results: Results): string[][] =>
  POLICY_NAMES.map((name) => [name, ...CHOICE_METRICS.map((m) => fmt(results[name].metrics[m], metricDigits(m)))]);

/** The human-readable tables: one row per policy with rewards, then with the picks per dimension and exploration; then the engine's targets. */
export function formatTable(results: Results, interactions: number): string {
  const oracleAll = results.oracle.meanRewardAll;
  const L = METRIC_LABELS;
  const header = [
    'policy',
    L.meanReward_1_10,
    L.meanReward_11_40,
    L.meanReward_41_80,
    `regret/user 1–${interactions}`,
    L.bestFramingShareLast10,
    L.coldStartReward,
    L.driftRecovery,
    'recovered',
    L.ece,
  ];
  const rows = POLICY_NAMES.map((name) => {
    const { metrics: m, meanRewardAll, driftRecoveredShare } = results[name];
    return [
      name,
      fmt(m.meanReward_1_10),
      fmt(m.meanReward_11_40),
      fmt(m.meanReward_41_80),
      fmt((oracleAll - meanRewardAll) * interactions, 2),
      fmt(m.bestFramingShareLast10),
      fmt(m.coldStartReward),
      fmt(m.driftRecovery, metricDigits('driftRecovery')),
      `${Math.round(driftRecoveredShare * 100)}%`,
      fmt(m.ece),
    ];
  });
  const lines = formatColumns(header, rows);
  lines.push('', ...formatColumns(['policy', ...CHOICE_METRICS.map((m) => METRIC_LABELS[m])], choiceRows(results)));
  lines.push('', 'targets for "engine":');
  for (const check of checkTargets(results)) lines.push(`  [${check.pass ? 'PASS' : 'FAIL'}] ${check.target}: ${check.value}`);
  return lines.join('\n');
}
