import { z } from 'zod';
import { DIMENSION_NAMES, type Dimension } from '../arms';
import type { SelectionProbabilities } from '../learner';
import { CELL_COUNT, COMPLEXITY_COUNT, DIMENSION_OFFSET, cellIndex, round4, valueCount, zeros } from './layout';

/**
 * Population prior of one (account, environment): aggregate evidence per task complexity and
 * value, from which every user of that tenant starts (empirical Bayes). The worker keeps it up
 * to date incrementally: each batch adds a delta (observePopulation) and merges it under a row
 * lock (mergePopulation), decaying older evidence by POPULATION_DECAY per outcome.
 *
 * - Means are self-normalised inverse-propensity estimates: each outcome counts with weight
 *   1/p (capped at MAX_WEIGHT) for the probability p with which its value was selected, so a
 *   value explored by few users, or exploited only by users who like it, is not over- or
 *   under-rated for the population as a whole. Such a mean is only as certain as its
 *   effective sample size (Σw)²/Σw² (Kish): a cell resting on a few heavily weighted
 *   outcomes is shrunk toward its dimension's mean and kept uncertain, instead of counting as
 *   many outcomes as it holds.
 * - Prior spreads come from moments of the same outcomes (method of moments), weighted like the
 *   means and taken around the part ℓ of the user's general level that the other dimensions
 *   account for (userLevels, levelWeights): for an outcome r of a user whose earlier rewards in
 *   the same cell average ȳ,
 *   E[(r − μ − ℓ)(ȳ − μ − ℓ)] is the between-user variance of that value's true reward; with ȳ
 *   from the user's other complexities it is the part shared across complexities;
 *   E[(r − μ − ℓ)²] minus the former is the outcome noise. All are clamped so that the
 *   population never counts for more than PRIOR_CAP of a user's own outcomes.
 */
const cells = z.array(z.number()).length(CELL_COUNT);
/** [Σ, count] per (complexity, value). */
const moments = z.array(z.number()).length(2 * CELL_COUNT);

export const populationPriorSchema = z.object({
  format: z.literal('pop-v1'),
  /** Outcomes merged so far (decayed). */
  events: z.number().min(0),
  /** Σ weight, Σ weight·reward and raw outcome count per (complexity, value). */
  w: cells,
  wr: cells,
  n: cells,
  /** Σ weight² per (complexity, value); absent from priors stored before it existed (see weightSquares). */
  w2: cells.optional(),
  same: moments,
  cross: moments,
  spread: moments,
});
export type PopulationPrior = z.infer<typeof populationPriorSchema>;

/** Per-outcome decay of population evidence (effective memory ≈ 5,000 outcomes). */
export const POPULATION_DECAY = 0.9998;
/** Cap on the inverse-propensity weight of one outcome. */
export const MAX_WEIGHT = 10;
/** The population never counts for more than this many of one user's own outcomes. */
export const PRIOR_CAP = 15;
/** Pseudo-outcomes (of effective sample size) pulling a value's mean toward its dimension's mean at that complexity. */
export const MEAN_SHRINK = 3;
/** Moment estimates are used once they rest on this many outcomes. */
const MIN_MOMENTS = 30;
const DEFAULT_MEAN = 0.5;
const DEFAULT_NOISE = 0.1;
const DEFAULT_SPREAD = 0.05;
const NOISE_RANGE = [0.02, 0.3] as const;
const SPREAD_MAX = 0.25;
/** The complexity-specific part of the spread is never below this share of it. */
const MIN_CONTEXT_SHARE = 0.15;

export function emptyPopulation(): PopulationPrior {
  return {
    format: 'pop-v1',
    events: 0,
    w: zeros(CELL_COUNT),
    wr: zeros(CELL_COUNT),
    n: zeros(CELL_COUNT),
    w2: zeros(CELL_COUNT),
    same: zeros(2 * CELL_COUNT),
    cross: zeros(2 * CELL_COUNT),
    spread: zeros(2 * CELL_COUNT),
  };
}

export function parsePopulation(raw: unknown): PopulationPrior {
  const parsed = populationPriorSchema.safeParse(raw);
  return parsed.success ? parsed.data : emptyPopulation();
}

/** What the engine uses of a population prior, derived once per prior object. */
export interface CompiledPrior {
  /** Prior mean reward per cell (complexity · VALUE_COUNT + slot). */
  mean: Float64Array;
  /** Uncertainty (variance) of that mean. */
  meanVar: Float64Array;
  /** Outcomes behind each cell (decayed). */
  support: Float64Array;
  /** Per cell: outcome noise σ², user-level spread τ_u² (shared across complexities), complexity-level spread τ_c². */
  noise: Float64Array;
  userVar: Float64Array;
  contextVar: Float64Array;
}

/** Clamps to [lo, hi]; NaN becomes lo. */
const clamp = (x: number, lo: number, hi: number) => (Number.isNaN(x) ? lo : Math.min(hi, Math.max(lo, x)));

/** Σ/count of a moment over some cells, or null below MIN_MOMENTS. */
function momentMean(m: readonly number[], cellsOf: readonly number[]): number | null {
  let sum = 0;
  let count = 0;
  for (const cell of cellsOf) {
    sum += m[2 * cell]!;
    count += m[2 * cell + 1]!;
  }
  return count >= MIN_MOMENTS ? sum / count : null;
}

/** Σ weight² per cell; for a prior stored without it, w²/n — as if every weight in a cell had been equal. */
function weightSquares(prior: PopulationPrior): readonly number[] {
  return prior.w2 ?? prior.w.map((w, cell) => (prior.n[cell]! > 0 ? (w * w) / prior.n[cell]! : 0));
}

const compiled = new WeakMap<PopulationPrior, CompiledPrior>();
const weights = new WeakMap<PopulationPrior, Record<Dimension, number>>();

/**
 * Per dimension, how much of a user's level its moments are taken around: 1 − the dimension's
 * share of the between-user variance (the pooled `same` moments of all dimensions, negative
 * ones as 0; 1 everywhere until there are any). A user's level is mostly what the dimension
 * that matters most did for them: for the others it is noise to remove (a user whose framing
 * suits them does well whatever the style), for that dimension it is the very difference
 * between users being measured — taken out, a framing a user loves looked like the user's
 * level and the framings' spreads came out too narrow to find it.
 */
export function levelWeights(prior: PopulationPrior): Record<Dimension, number> {
  const cached = weights.get(prior);
  if (cached) return cached;
  const between = {} as Record<Dimension, number>;
  let total = 0;
  for (const dim of DIMENSION_NAMES) {
    const dimCells: number[] = [];
    for (let c = 0; c < COMPLEXITY_COUNT; c++)
      for (let i = 0; i < valueCount(dim); i++) dimCells.push(cellIndex(c, DIMENSION_OFFSET[dim] + i));
    between[dim] = Math.max(0, momentMean(prior.same, dimCells) ?? 0);
    total += between[dim];
  }
  const result = {} as Record<Dimension, number>;
  for (const dim of DIMENSION_NAMES) result[dim] = total > 0 ? 1 - between[dim] / total : 1;
  weights.set(prior, result);
  return result;
}

/**
 * Means, spreads and noise per cell. Spreads come from the cell's own moments once it has
 * MIN_MOMENTS of them (values differ: the population's favourite splits users, a rarely liked
 * value does not), else from the dimension's pooled moments, else from defaults.
 */
export function compilePopulation(prior: PopulationPrior): CompiledPrior {
  const cached = compiled.get(prior);
  if (cached) return cached;
  const result: CompiledPrior = {
    mean: new Float64Array(CELL_COUNT),
    meanVar: new Float64Array(CELL_COUNT),
    support: Float64Array.from(prior.n),
    noise: new Float64Array(CELL_COUNT),
    userVar: new Float64Array(CELL_COUNT),
    contextVar: new Float64Array(CELL_COUNT),
  };
  const w2 = weightSquares(prior);
  for (const dim of DIMENSION_NAMES) {
    const first = DIMENSION_OFFSET[dim];
    const k = valueCount(dim);
    const dimCells: number[] = [];
    for (let c = 0; c < COMPLEXITY_COUNT; c++) for (let slot = first; slot < first + k; slot++) dimCells.push(cellIndex(c, slot));
    const pooledBetween = momentMean(prior.same, dimCells);
    const pooledTotal = momentMean(prior.spread, dimCells);
    const noise = pooledBetween !== null && pooledTotal !== null ? clamp(pooledTotal - pooledBetween, ...NOISE_RANGE) : DEFAULT_NOISE;
    // A moment that is not positive (e.g. every reward identical) says nothing about spread.
    const pooledSpread = pooledBetween !== null && pooledBetween > 0 ? pooledBetween : DEFAULT_SPREAD;
    const pooledShare = clamp((momentMean(prior.cross, dimCells) ?? pooledSpread / 2) / pooledSpread, 0, 1 - MIN_CONTEXT_SHARE);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      let w = 0;
      let wr = 0;
      for (let slot = first; slot < first + k; slot++) {
        w += prior.w[cellIndex(c, slot)]!;
        wr += prior.wr[cellIndex(c, slot)]!;
      }
      const dimMean = w > 0 ? wr / w : DEFAULT_MEAN;
      for (let slot = first; slot < first + k; slot++) {
        const cell = cellIndex(c, slot);
        const spread = clamp(momentMean(prior.same, [cell]) ?? pooledSpread, noise / PRIOR_CAP, SPREAD_MAX);
        const share = clamp((momentMean(prior.cross, [cell]) ?? pooledShare * spread) / spread, 0, 1 - MIN_CONTEXT_SHARE);
        const w = prior.w[cell]!;
        const effective = w > 0 && w2[cell]! > 0 ? (w * w) / w2[cell]! : 0;
        const estimate = w > 0 ? prior.wr[cell]! / w : dimMean;
        result.mean[cell] = (effective * estimate + MEAN_SHRINK * dimMean) / (effective + MEAN_SHRINK);
        result.meanVar[cell] = noise / (effective + MEAN_SHRINK);
        result.noise[cell] = noise;
        result.userVar[cell] = share * spread;
        result.contextVar[cell] = (1 - share) * spread;
      }
    }
  }
  compiled.set(prior, result);
  return result;
}

/** A user's evidence per (complexity, value) before an outcome: decayed counts and reward sums. */
export interface UserCellTotals {
  n: ArrayLike<number>;
  s: ArrayLike<number>;
}

/**
 * Adds one outcome to a population delta (a PopulationPrior holding only new evidence), using
 * the prior as it was when the batch started and the user's evidence before this outcome.
 */
export function observePopulation(
  delta: PopulationPrior,
  prior: PopulationPrior,
  user: UserCellTotals,
  complexity: number,
  slots: Record<Dimension, number>,
  probabilities: SelectionProbabilities,
  reward: number,
): void {
  const { mean } = compilePopulation(prior);
  const share = levelWeights(prior);
  delta.events += 1;
  const level = new Float64Array(COMPLEXITY_COUNT);
  for (const dim of DIMENSION_NAMES) {
    const slot = slots[dim];
    if (slot < 0) continue;
    userLevels(user, mean, dim, share[dim], level);
    const cell = cellIndex(complexity, slot);
    const weight = Math.min(MAX_WEIGHT, 1 / Math.max(probabilities[dim], 1 / MAX_WEIGHT));
    delta.w[cell]! += weight;
    delta.wr[cell]! += weight * reward;
    delta.n[cell]! += 1;
    (delta.w2 ??= zeros(CELL_COUNT))[cell]! += weight * weight;
    // Moments carry the same weight as the mean: a user who stopped choosing a value they
    // dislike would otherwise drop out of its spread.
    const residual = reward - mean[cell]! - level[complexity]!;
    delta.spread[2 * cell]! += weight * residual * residual;
    delta.spread[2 * cell + 1]! += weight;
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      const other = cellIndex(c, slot);
      const n = user.n[other]!;
      if (n < 0.5) continue;
      const moment = c === complexity ? delta.same : delta.cross;
      moment[2 * cell]! += weight * residual * (user.s[other]! / n - mean[other]! - level[c]!);
      moment[2 * cell + 1]! += weight;
    }
  }
}

/**
 * The user's general level per complexity in one dimension: their average residual over all of
 * the dimension's values there (0 without evidence), times `weight` (levelWeights: the part the
 * other dimensions account for). A user who does well whatever is shown — or whose framing
 * suits them — is no evidence that users disagree about a communication style, so moments are
 * taken around it; otherwise every dimension's spread would carry the framing's and the user's
 * own level, and the minor dimensions' priors would be far too wide to follow the population.
 */
function userLevels(user: UserCellTotals, mean: Float64Array, dim: Dimension, weight: number, level: Float64Array): void {
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    let n = 0;
    let residual = 0;
    for (let i = 0; i < valueCount(dim); i++) {
      const cell = cellIndex(c, DIMENSION_OFFSET[dim] + i);
      n += user.n[cell]!;
      residual += user.s[cell]! - user.n[cell]! * mean[cell]!;
    }
    level[c] = n >= 1 ? (weight * residual) / n : 0;
  }
}

/**
 * prior · POPULATION_DECAY^(delta.events) + delta: a new object (the prior is not changed).
 * Σ weight² decays by the factor squared, as the square of each decayed weight does.
 */
export function mergePopulation(prior: PopulationPrior, delta: PopulationPrior): PopulationPrior {
  const factor = Math.pow(POPULATION_DECAY, delta.events);
  const mix = (a: readonly number[], b: readonly number[], f = factor) => a.map((x, i) => round4(x * f + b[i]!));
  return {
    format: 'pop-v1',
    events: round4(prior.events * factor + delta.events),
    w: mix(prior.w, delta.w),
    wr: mix(prior.wr, delta.wr),
    n: mix(prior.n, delta.n),
    w2: mix(weightSquares(prior), weightSquares(delta), factor * factor),
    same: mix(prior.same, delta.same),
    cross: mix(prior.cross, delta.cross),
    spread: mix(prior.spread, delta.spread),
  };
}
