import { z } from 'zod';
import {
  choiceSchema,
  DIMENSION_NAMES,
  DIMENSIONS,
  TASK_COMPLEXITY,
  taskComplexitySchema,
  type Choice,
  type TaskComplexity,
} from '../domain/arms';

/**
 * Offline (counterfactual) evaluation of policies from logged decisions and their outcomes
 * (docs/OPERATIONS.md, "Offline evaluation"). Every decision logs, per dimension, the
 * probability with which the logging policy chose the value it served; an event's logging
 * propensity is their product. A target policy π is then estimated by weighting each logged
 * reward with w = π(logged combination) / propensity:
 *
 * - IPS   = Σ wᵢ·rᵢ / n, with the normal CI mean ± 1.96·sd(w·r)/√n: unbiased, but
 *   high-variance when propensities are small;
 * - SNIPS = Σ wᵢ·rᵢ / Σ wᵢ, with the delta-method CI ± 1.96·√(Σ (wᵢ(rᵢ − V))²) / Σ wᵢ: a little
 *   biased, much less variance, and always within the reward range.
 *
 * A CI needs at least two events carrying weight (w > 0); with fewer it is null.
 */

/** 95% two-sided normal quantile. */
export const Z_95 = 1.96;
/**
 * Propensities are clamped to at least this. A chosen value cannot really have had
 * probability 0, but the logged probabilities are numeric estimates (tails of a normal
 * integral) that can underflow; the clamp keeps weights finite (at most 1e6 · π).
 */
export const MIN_PROPENSITY = 1e-6;

const probability = z.number().min(0).max(1);
/** Selection probability of each logged value under the logging policy (1 when pinned). */
export const loggedProbabilitiesSchema = z.object({
  framing: probability,
  style: probability,
  complexityHandling: probability,
  encouragement: probability,
});

export const loggedEventSchema = z.object({
  choice: choiceSchema,
  probabilities: loggedProbabilitiesSchema,
  /** The task complexity of the context (not the complexity handling chosen); absent when the request gave none. */
  taskComplexity: taskComplexitySchema.optional(),
  reward: z.number().min(0).max(1),
});
export type LoggedEvent = z.infer<typeof loggedEventSchema>;

const intervalSchema = z.tuple([z.number(), z.number()]).nullable();
const estimateSchema = z.object({ value: z.number(), ci: intervalSchema, events: z.number().int() });
const targetEstimatesSchema = z.object({ ips: estimateSchema.nullable(), snips: estimateSchema.nullable() });
/** Service mean − target SNIPS, and service mean / target SNIPS (null when that is 0). */
const liftSchema = z.object({ difference: z.number(), ratio: z.number().nullable() });

export const offlineEvaluationSchema = z.object({
  events: z.number().int(),
  /** The logged policy, on-policy: the plain mean reward. */
  service: z.object({ mean: z.number(), ci: intervalSchema, events: z.number().int() }).nullable(),
  uniformRandom: targetEstimatesSchema,
  populationBest: targetEstimatesSchema.extend({
    choiceByComplexity: z.record(taskComplexitySchema, choiceSchema),
    /** What it serves a context without a task complexity. */
    choiceWithoutComplexity: choiceSchema,
    /** Events whose logged combination is the population best at their complexity. */
    matchingEvents: z.number().int(),
  }),
  lift: z.object({ uniformRandom: liftSchema.nullable(), populationBest: liftSchema.nullable() }),
});
export type Estimate = z.infer<typeof estimateSchema>;
export type OfflineEvaluation = z.infer<typeof offlineEvaluationSchema>;

/** Probability of any one combination under uniform random choice: Π 1/K over the dimensions. */
export const UNIFORM_PROBABILITY = DIMENSION_NAMES.reduce((p, dim) => p / DIMENSIONS[dim].values.length, 1);

export function loggingPropensity(probabilities: LoggedEvent['probabilities']): number {
  return Math.max(
    MIN_PROPENSITY,
    DIMENSION_NAMES.reduce((p, dim) => p * probabilities[dim], 1),
  );
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const interval = (value: number, half: number): [number, number] => [value - half, value + half];

/** Mean with a normal CI; `supporting` is how many terms carry weight (the CI needs two). */
function meanEstimate(terms: readonly number[], supporting: number): Estimate | null {
  const n = terms.length;
  if (n === 0) return null;
  const mean = sum(terms) / n;
  if (supporting < 2) return { value: mean, ci: null, events: n };
  const variance = sum(terms.map((x) => (x - mean) ** 2)) / (n - 1);
  return { value: mean, ci: interval(mean, Z_95 * Math.sqrt(variance / n)), events: n };
}

function snipsEstimate(weights: readonly number[], rewards: readonly number[]): Estimate | null {
  const totalWeight = sum(weights);
  if (!(totalWeight > 0)) return null;
  const value = sum(weights.map((w, i) => w * rewards[i]!)) / totalWeight;
  const supporting = weights.filter((w) => w > 0).length;
  if (supporting < 2) return { value, ci: null, events: supporting };
  const spread = Math.sqrt(sum(weights.map((w, i) => (w * (rewards[i]! - value)) ** 2)));
  return { value, ci: interval(value, (Z_95 * spread) / totalWeight), events: supporting };
}

function targetEstimates(events: readonly LoggedEvent[], targetProbability: (event: LoggedEvent) => number) {
  const weights = events.map((e) => targetProbability(e) / loggingPropensity(e.probabilities));
  const rewards = events.map((e) => e.reward);
  const supporting = weights.filter((w) => w > 0).length;
  return {
    ips: meanEstimate(
      weights.map((w, i) => w * rewards[i]!),
      supporting,
    ),
    snips: snipsEstimate(weights, rewards),
    supporting,
  };
}

function lift(serviceMean: number | undefined, target: Estimate | null): z.infer<typeof liftSchema> | null {
  if (serviceMean === undefined || target === null) return null;
  return { difference: serviceMean - target.value, ratio: target.value > 0 ? serviceMean / target.value : null };
}

const sameChoice = (a: Choice, b: Choice) => DIMENSION_NAMES.every((dim) => a[dim] === b[dim]);

/**
 * Estimates the mean reward of the logged policy (on-policy), of uniform random choice and of
 * always serving `populationBest(complexity)` (a deterministic target: π = 1 for that
 * combination, 0 for any other).
 */
export function evaluateOffline(
  events: readonly LoggedEvent[],
  populationBest: (complexity: TaskComplexity | undefined) => Choice,
): OfflineEvaluation {
  const rewards = events.map((e) => e.reward);
  const service = meanEstimate(rewards, rewards.length);
  const choiceByComplexity = Object.fromEntries(TASK_COMPLEXITY.map((c) => [c, populationBest(c)])) as Record<TaskComplexity, Choice>;
  const uniform = targetEstimates(events, () => UNIFORM_PROBABILITY);
  const choiceWithoutComplexity = populationBest(undefined);
  const bestFor = (e: LoggedEvent) => (e.taskComplexity ? choiceByComplexity[e.taskComplexity] : choiceWithoutComplexity);
  const best = targetEstimates(events, (e) => (sameChoice(e.choice, bestFor(e)) ? 1 : 0));
  return {
    events: events.length,
    service: service && { mean: service.value, ci: service.ci, events: service.events },
    uniformRandom: { ips: uniform.ips, snips: uniform.snips },
    populationBest: { choiceByComplexity, choiceWithoutComplexity, matchingEvents: best.supporting, ips: best.ips, snips: best.snips },
    lift: { uniformRandom: lift(service?.value, uniform.snips), populationBest: lift(service?.value, best.snips) },
  };
}
