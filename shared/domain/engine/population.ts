import { z } from 'zod';
import { DIMENSION_NAMES } from '../arms';
import { NEUTRAL_GRID, addNeutralEvidence } from './neutral-share';
import { spreadOf } from './complexity-shares';
import { CELL_COUNT, COMPLEXITY_COUNT, VALUE_COUNT, cellIndex, roundSignificant, zeros } from './layout';

/**
 * Population prior of one (account, environment): what the tenant's users' outcomes say about
 * the whole population, kept by the worker as decayed sums so that batches merge by addition
 * (observePopulation folds one outcome into a delta, mergePopulation adds a delta to the stored
 * prior) — docs/adr/0009-favourite-model.md. What the favourite model of each dimension
 * (favourite.ts) makes of these sums is derived in population-model.ts, which depends on this
 * module and not the other way round.
 */
const cells = z.array(z.number()).length(CELL_COUNT);
const perDimension = z.array(z.number()).length(DIMENSION_NAMES.length);
const perComplexity = z.array(z.number()).length(COMPLEXITY_COUNT);

/** The stored format's name: a prior of any other is read as empty. */
export const PRIOR_FORMAT = 'pop-v4';

export const populationPriorSchema = z.object({
  format: z.literal(PRIOR_FORMAT),
  /** Outcomes merged so far (decayed). */
  outcomeCount: z.number().min(0),
  /** Raw outcome count and reward sum per cell (what the rationale quotes). */
  shownCount: cells,
  rewardSum: cells,
  /** Σ weight, Σ weight · credited reward and Σ weight² per cell. */
  ipsWeight: cells,
  ipsCreditedSum: cells,
  ipsWeightSquares: cells,
  /** Reward sum and count per complexity. */
  complexityRewardSum: perComplexity,
  complexityCount: perComplexity,
  /** Per dimension: Σ P(follower)·u and Σ u (u: the user's weight), and the EM sums of the levels. */
  followerSum: perDimension,
  userWeight: perDimension,
  favouriteLevelSum: perDimension,
  favouriteLevelWeight: perDimension,
  otherLevelSum: perDimension,
  otherLevelWeight: perDimension,
  /**
   * Per dimension, the within-user contrast (expectation.ts's withinUserContrast): Σ of users'
   * between-value sums of squares of credited rewards in excess of their noise, and Σ of what
   * a unit step adds to them.
   */
  contrastExcess: perDimension,
  contrastScale: perDimension,
  /**
   * Log-likelihood of the task-type-neutral share at each point of NEUTRAL_GRID: Σ t · log(share ·
   * B + 1 − share) over outcomes of users with typed evidence (t: its weight, B: the user's Bayes
   * factor for neutral; task-types.ts).
   */
  neutralLogLikelihood: z.array(z.number()).length(NEUTRAL_GRID.length),
  /** Per dimension: Σ, Σ² and count of the credited reward less its complexity's offset. */
  creditedSum: perDimension,
  creditedSquares: perDimension,
  creditedCount: perDimension,
  /** Σ, Σ² and count of the prediction errors of whole rewards (reward − its prediction). */
  predictionErrorSum: z.number(),
  predictionErrorSquares: z.number(),
  predictionErrorCount: z.number(),
});
export type PopulationPrior = z.infer<typeof populationPriorSchema>;

/** Per-outcome decay of population evidence (effective memory ≈ 5,000 outcomes). */
export const POPULATION_DECAY = 0.9998;
/** Cap on the inverse-propensity weight of one outcome. */
export const MAX_WEIGHT = 3;

export function emptyPopulation(): PopulationPrior {
  const d = () => zeros(DIMENSION_NAMES.length);
  return {
    format: PRIOR_FORMAT,
    outcomeCount: 0,
    shownCount: zeros(CELL_COUNT),
    rewardSum: zeros(CELL_COUNT),
    ipsWeight: zeros(CELL_COUNT),
    ipsCreditedSum: zeros(CELL_COUNT),
    ipsWeightSquares: zeros(CELL_COUNT),
    complexityRewardSum: zeros(COMPLEXITY_COUNT),
    complexityCount: zeros(COMPLEXITY_COUNT),
    followerSum: d(),
    userWeight: d(),
    favouriteLevelSum: d(),
    favouriteLevelWeight: d(),
    otherLevelSum: d(),
    otherLevelWeight: d(),
    contrastExcess: d(),
    contrastScale: d(),
    neutralLogLikelihood: zeros(NEUTRAL_GRID.length),
    creditedSum: d(),
    creditedSquares: d(),
    creditedCount: d(),
    predictionErrorSum: 0,
    predictionErrorSquares: 0,
    predictionErrorCount: 0,
  };
}

/** A stored prior; an empty one for anything that is not one (the worker's merges rebuild it). */
export function parsePopulation(raw: unknown): PopulationPrior {
  const parsed = populationPriorSchema.safeParse(raw);
  return parsed.success ? parsed.data : emptyPopulation();
}

/** What one outcome adds to a population delta (all computed by the engine). */
export interface PopulationObservation {
  /** The reward level of each complexity relative to the overall mean, as the prior before this outcome puts it (CompiledPopulation.offsets). */
  offsets: ArrayLike<number>;
  /** The request's complexity index, or UNKNOWN_COMPLEXITY (then `shares` spreads the outcome over the complexities). */
  complexity: number;
  /** For UNKNOWN_COMPLEXITY: the user's share of each complexity (complexity-shares.ts). */
  shares?: Float64Array;
  /** Cell of the value shown, per dimension, at `complexity` (only its value slot is read for UNKNOWN_COMPLEXITY). */
  cells: ArrayLike<number>;
  /** Logged selection probability of the value shown, per dimension. */
  probabilities: ArrayLike<number>;
  reward: number;
  /** The reward credited to each dimension (less the other dimensions' expected part). */
  credited: ArrayLike<number>;
  /** Whole reward − its prediction. */
  error: number;
  /** EM: per dimension, the user's weight, P(follower), and the favourite-weighted and other level sums and weights. */
  userWeight: ArrayLike<number>;
  follower: ArrayLike<number>;
  favS: ArrayLike<number>;
  favN: ArrayLike<number>;
  otherS: ArrayLike<number>;
  otherN: ArrayLike<number>;
  /** The user's within-user contrast: between-value sum of squares in excess of noise, and a unit step's part of it. */
  contrastExcess: ArrayLike<number>;
  contrastScale: ArrayLike<number>;
  /** The weight of the user's typed evidence and the log Bayes factor for their task types being neutral. */
  typedWeight: number;
  neutralLogBayes: number;
}

/**
 * Adds one outcome to a population delta (a PopulationPrior holding only new evidence). An
 * outcome without complexity counts at each complexity by its share (the inverse-propensity sums
 * as a fraction of an outcome, so each complexity's effective sample size grows by the share).
 */
export function observePopulation(delta: PopulationPrior, o: PopulationObservation): void {
  const spread = spreadOf(o.complexity, o.shares);
  delta.outcomeCount += 1;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    if (spread[c] === 0) continue;
    delta.complexityRewardSum[c]! += spread[c]! * o.reward;
    delta.complexityCount[c]! += spread[c]!;
  }
  for (let d = 0; d < DIMENSION_NAMES.length; d++) {
    const slot = o.cells[d]! % VALUE_COUNT;
    const weight = 1 / Math.max(o.probabilities[d]!, 1 / MAX_WEIGHT); // ≤ MAX_WEIGHT
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      const share = spread[c]!;
      if (share === 0) continue;
      const cell = cellIndex(c, slot);
      delta.shownCount[cell]! += share;
      delta.rewardSum[cell]! += share * o.reward;
      delta.ipsWeight[cell]! += share * weight;
      delta.ipsCreditedSum[cell]! += share * weight * o.credited[d]!;
      delta.ipsWeightSquares[cell]! += share * weight * weight;
      const centred = o.credited[d]! - o.offsets[c]!;
      delta.creditedSum[d]! += share * centred;
      delta.creditedSquares[d]! += share * centred * centred;
    }
    delta.creditedCount[d]! += 1;
    delta.followerSum[d]! += o.userWeight[d]! * o.follower[d]!;
    delta.userWeight[d]! += o.userWeight[d]!;
    delta.favouriteLevelSum[d]! += o.favS[d]!;
    delta.favouriteLevelWeight[d]! += o.favN[d]!;
    delta.otherLevelSum[d]! += o.otherS[d]!;
    delta.otherLevelWeight[d]! += o.otherN[d]!;
    delta.contrastExcess[d]! += o.contrastExcess[d]!;
    delta.contrastScale[d]! += o.contrastScale[d]!;
  }
  if (o.typedWeight > 0) {
    addNeutralEvidence(delta.neutralLogLikelihood, o.typedWeight, o.neutralLogBayes);
  }
  delta.predictionErrorSum += o.error;
  delta.predictionErrorSquares += o.error * o.error;
  delta.predictionErrorCount += 1;
}

/** prior · POPULATION_DECAY^(delta.outcomeCount) + delta (Σ weight² by the square): a new object (neither input is changed). */
export function mergePopulation(prior: PopulationPrior, delta: PopulationPrior): PopulationPrior {
  const factor = Math.pow(POPULATION_DECAY, delta.outcomeCount);
  const mix = (a: readonly number[], b: readonly number[], f = factor) => a.map((x, i) => roundSignificant(x * f + b[i]!));
  const decayed = (a: number, b: number) => roundSignificant(a * factor + b);
  return {
    format: PRIOR_FORMAT,
    outcomeCount: decayed(prior.outcomeCount, delta.outcomeCount),
    shownCount: mix(prior.shownCount, delta.shownCount),
    rewardSum: mix(prior.rewardSum, delta.rewardSum),
    ipsWeight: mix(prior.ipsWeight, delta.ipsWeight),
    ipsCreditedSum: mix(prior.ipsCreditedSum, delta.ipsCreditedSum),
    // Σ weight² decays by the factor squared, as the square of each decayed weight does.
    ipsWeightSquares: mix(prior.ipsWeightSquares, delta.ipsWeightSquares, factor * factor),
    complexityRewardSum: mix(prior.complexityRewardSum, delta.complexityRewardSum),
    complexityCount: mix(prior.complexityCount, delta.complexityCount),
    followerSum: mix(prior.followerSum, delta.followerSum),
    userWeight: mix(prior.userWeight, delta.userWeight),
    favouriteLevelSum: mix(prior.favouriteLevelSum, delta.favouriteLevelSum),
    favouriteLevelWeight: mix(prior.favouriteLevelWeight, delta.favouriteLevelWeight),
    otherLevelSum: mix(prior.otherLevelSum, delta.otherLevelSum),
    otherLevelWeight: mix(prior.otherLevelWeight, delta.otherLevelWeight),
    contrastExcess: mix(prior.contrastExcess, delta.contrastExcess),
    contrastScale: mix(prior.contrastScale, delta.contrastScale),
    neutralLogLikelihood: mix(prior.neutralLogLikelihood, delta.neutralLogLikelihood),
    creditedSum: mix(prior.creditedSum, delta.creditedSum),
    creditedSquares: mix(prior.creditedSquares, delta.creditedSquares),
    creditedCount: mix(prior.creditedCount, delta.creditedCount),
    predictionErrorSum: decayed(prior.predictionErrorSum, delta.predictionErrorSum),
    predictionErrorSquares: decayed(prior.predictionErrorSquares, delta.predictionErrorSquares),
    predictionErrorCount: decayed(prior.predictionErrorCount, delta.predictionErrorCount),
  };
}
