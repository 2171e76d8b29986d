import { DIMENSION_NAMES, TASK_COMPLEXITY, type Choice } from '../domain/arms';
import type { Environment } from '../domain/environment';
import type { Estimate, OfflineEvaluation } from './offline-evaluation';

/** What `cos evaluate` prints: the estimates with what they were computed from. */
export interface EvaluationReportInput {
  account: { id: string; name: string };
  environment: Environment;
  since: Date | undefined;
  skipped: number;
  /** Version of the stored population prior; null when the tenant has none yet (an empty prior). */
  priorVersion: number | null;
  evaluation: OfflineEvaluation;
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;
const roundCi = (ci: [number, number] | null) => (ci ? ci.map(round4) : null);
const roundEstimate = (e: Estimate | null) => e && { value: round4(e.value), ci: roundCi(e.ci), events: e.events };
const roundLift = (l: { difference: number; ratio: number | null } | null) =>
  l && { difference: round4(l.difference), ratio: l.ratio === null ? null : round4(l.ratio) };

export function evaluationJson(input: EvaluationReportInput) {
  const { service, uniformRandom, populationBest, lift } = input.evaluation;
  return {
    account: input.account.name,
    accountId: input.account.id,
    environment: input.environment,
    since: input.since?.toISOString() ?? null,
    events: input.evaluation.events,
    skipped: input.skipped,
    policies: {
      service: service && { mean: round4(service.mean), ci: roundCi(service.ci), events: service.events },
      uniformRandom: { ips: roundEstimate(uniformRandom.ips), snips: roundEstimate(uniformRandom.snips) },
      populationBest: {
        priorVersion: input.priorVersion,
        choiceByComplexity: populationBest.choiceByComplexity,
        choiceWithoutComplexity: populationBest.choiceWithoutComplexity,
        matchingEvents: populationBest.matchingEvents,
        ips: roundEstimate(populationBest.ips),
        snips: roundEstimate(populationBest.snips),
      },
    },
    lift: { uniformRandom: roundLift(lift.uniformRandom), populationBest: roundLift(lift.populationBest) },
  };
}

const num = (x: number) => x.toFixed(4);
const ciText = (ci: [number, number] | null) => (ci ? `[${num(ci[0])}, ${num(ci[1])}]` : 'n/a');
const choiceText = (c: Choice) => DIMENSION_NAMES.map((dim) => c[dim]).join('/');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((row) => row[col]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, col) => cell.padEnd(widths[col]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function liftText(name: string, l: OfflineEvaluation['lift']['uniformRandom']): string {
  if (!l) return `n/a over ${name}`;
  const sign = l.difference >= 0 ? '+' : '';
  return `${sign}${num(l.difference)}${l.ratio === null ? '' : ` (×${l.ratio.toFixed(2)})`} over ${name}`;
}

export function evaluationText(input: EvaluationReportInput): string {
  const { evaluation: e, account, environment, since } = input;
  const scope = `account ${account.name} (${account.id}), ${environment}, ${since ? `decisions issued since ${since.toISOString()}` : 'all decisions'}`;
  const skipped = input.skipped > 0 ? `; ${input.skipped} skipped (unreadable logged choice, probabilities, context or reward)` : '';
  if (e.events === 0 || !e.service) return `offline evaluation: ${scope}\nno decisions with an outcome: nothing to evaluate${skipped}`;
  const estimateRow = (policy: string, estimator: string, est: Estimate | null) => [
    policy,
    estimator,
    est ? num(est.value) : 'n/a',
    est ? ciText(est.ci) : 'n/a',
    String(est?.events ?? 0),
  ];
  const best = e.populationBest;
  const prior = input.priorVersion === null ? 'no stored prior yet' : `prior v${input.priorVersion}`;
  return [
    `offline evaluation: ${scope}`,
    `${e.events} events (decisions with an outcome)${skipped}`,
    '',
    table([
      ['policy', 'estimator', 'value', '95% CI', 'events'],
      ['service (logged)', 'mean', num(e.service.mean), ciText(e.service.ci), String(e.service.events)],
      estimateRow('uniform random', 'IPS', e.uniformRandom.ips),
      estimateRow('uniform random', 'SNIPS', e.uniformRandom.snips),
      estimateRow('population best', 'IPS', best.ips),
      estimateRow('population best', 'SNIPS', best.snips),
    ]),
    '',
    `lift of the service (mean − SNIPS): ${liftText('uniform random', e.lift.uniformRandom)}, ${liftText('population best', e.lift.populationBest)}`,
    `population best (${prior}; ${best.matchingEvents} logged events match it): ${TASK_COMPLEXITY.map((c) => `${c} ${choiceText(best.choiceByComplexity[c])}`).join(', ')}, no complexity given ${choiceText(best.choiceWithoutComplexity)}`,
    'IPS weights each logged reward by π(target)/p(logged) and averages over all events (unbiased, noisy when p is small); ' +
      'SNIPS divides by the sum of the weights instead (slightly biased, much less variance). A CI needs 2 events with weight > 0.',
  ].join('\n');
}
