import { z } from 'zod';
import { DIMENSION_NAMES } from '../arms';
import { NEUTRAL_GRID, addNeutralEvidence } from './neutral-share';
import { STEP_GRID } from './step-likelihood';
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
const STEP_COUNT = DIMENSION_NAMES.length * STEP_GRID.length;

const populationPriorSchema = z.object({
  format: z.literal('pop-v2'),
  /** Outcomes merged so far (decayed). */
  events: z.number().min(0),
  /** Raw outcome count and reward sum per cell (what the rationale quotes). */
  n: cells,
  r: cells,
  /** Σ weight, Σ weight · credited reward and Σ weight² per cell. */
  w: cells,
  wr: cells,
  w2: cells,
  /** Reward sum and count per complexity. */
  cr: perComplexity,
  cn: perComplexity,
  /** Per dimension: Σ P(follower)·u and Σ u (u: the user's weight), and the EM sums of the levels. */
  follow: perDimension,
  users: perDimension,
  favS: perDimension,
  favN: perDimension,
  otherS: perDimension,
  otherN: perDimension,
  /**
   * Log-likelihood of the task-type-neutral share at each point of NEUTRAL_GRID: Σ t · log(share ·
   * B + 1 − share) over outcomes of users with typed evidence (t: its weight, B: the user's Bayes
   * factor for neutral; task-types.ts) — absent from priors written before task types were pooled.
   */
  neutral: z
    .array(z.number())
    .length(NEUTRAL_GRID.length)
    .default(() => zeros(NEUTRAL_GRID.length)),
  /**
   * Per dimension and candidate step of STEP_GRID (index d · STEP_GRID.length + j): Σ log predictive
   * density of the credited reward (step-likelihood.ts) — absent from priors written before it.
   */
  stepLikelihood: z
    .array(z.number())
    .length(STEP_COUNT)
    .default(() => zeros(STEP_COUNT)),
  /** Per dimension: Σ, Σ² and count of the credited reward less its complexity's offset. */
  rs: perDimension,
  rs2: perDimension,
  rn: perDimension,
  /** Σ, Σ² and count of the prediction errors of whole rewards. */
  err: z.tuple([z.number(), z.number(), z.number()]),
});
export type PopulationPrior = z.infer<typeof populationPriorSchema>;

/** Per-outcome decay of population evidence (effective memory ≈ 5,000 outcomes). */
export const POPULATION_DECAY = 0.9998;
/** Cap on the inverse-propensity weight of one outcome. */
export const MAX_WEIGHT = 3;

export function emptyPopulation(): PopulationPrior {
  const d = () => zeros(DIMENSION_NAMES.length);
  return {
    format: 'pop-v2',
    events: 0,
    n: zeros(CELL_COUNT),
    r: zeros(CELL_COUNT),
    w: zeros(CELL_COUNT),
    wr: zeros(CELL_COUNT),
    w2: zeros(CELL_COUNT),
    cr: zeros(COMPLEXITY_COUNT),
    cn: zeros(COMPLEXITY_COUNT),
    follow: d(),
    users: d(),
    favS: d(),
    favN: d(),
    otherS: d(),
    otherN: d(),
    neutral: zeros(NEUTRAL_GRID.length),
    stepLikelihood: zeros(STEP_COUNT),
    rs: d(),
    rs2: d(),
    rn: d(),
    err: [0, 0, 0],
  };
}

/** A stored prior, or an empty one for anything else (including the first engine's `pop-v1` priors, which the worker rebuilds). */
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
  /** The weight of the user's typed evidence and the log Bayes factor for their task types being neutral. */
  typedWeight: number;
  neutralLogBayes: number;
  /** log predictive density of the credited rewards at each candidate step (step-likelihood.ts); absent for an outcome without complexity. */
  stepLogDensities?: ArrayLike<number>;
}

/**
 * Adds one outcome to a population delta (a PopulationPrior holding only new evidence). An
 * outcome without complexity counts at each complexity by its share (the inverse-propensity sums
 * as a fraction of an outcome, so each complexity's effective sample size grows by the share).
 */
export function observePopulation(delta: PopulationPrior, o: PopulationObservation): void {
  const spread = spreadOf(o.complexity, o.shares);
  delta.events += 1;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    if (spread[c] === 0) continue;
    delta.cr[c]! += spread[c]! * o.reward;
    delta.cn[c]! += spread[c]!;
  }
  for (let d = 0; d < DIMENSION_NAMES.length; d++) {
    const slot = o.cells[d]! % VALUE_COUNT;
    const weight = 1 / Math.max(o.probabilities[d]!, 1 / MAX_WEIGHT); // ≤ MAX_WEIGHT
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      const share = spread[c]!;
      if (share === 0) continue;
      const cell = cellIndex(c, slot);
      delta.n[cell]! += share;
      delta.r[cell]! += share * o.reward;
      delta.w[cell]! += share * weight;
      delta.wr[cell]! += share * weight * o.credited[d]!;
      delta.w2[cell]! += share * weight * weight;
      const centred = o.credited[d]! - o.offsets[c]!;
      delta.rs[d]! += share * centred;
      delta.rs2[d]! += share * centred * centred;
    }
    delta.rn[d]! += 1;
    delta.follow[d]! += o.userWeight[d]! * o.follower[d]!;
    delta.users[d]! += o.userWeight[d]!;
    delta.favS[d]! += o.favS[d]!;
    delta.favN[d]! += o.favN[d]!;
    delta.otherS[d]! += o.otherS[d]!;
    delta.otherN[d]! += o.otherN[d]!;
  }
  if (o.stepLogDensities) for (let i = 0; i < STEP_COUNT; i++) delta.stepLikelihood[i]! += o.stepLogDensities[i]!;
  if (o.typedWeight > 0) {
    addNeutralEvidence(delta.neutral, o.typedWeight, o.neutralLogBayes);
  }
  delta.err[0] += o.error;
  delta.err[1] += o.error * o.error;
  delta.err[2] += 1;
}

/** prior · POPULATION_DECAY^(delta.events) + delta (Σ weight² by the square): a new object (neither input is changed). */
export function mergePopulation(prior: PopulationPrior, delta: PopulationPrior): PopulationPrior {
  const factor = Math.pow(POPULATION_DECAY, delta.events);
  const mix = (a: readonly number[], b: readonly number[], f = factor) => a.map((x, i) => roundSignificant(x * f + b[i]!));
  return {
    format: 'pop-v2',
    events: roundSignificant(prior.events * factor + delta.events),
    n: mix(prior.n, delta.n),
    r: mix(prior.r, delta.r),
    w: mix(prior.w, delta.w),
    wr: mix(prior.wr, delta.wr),
    // Σ weight² decays by the factor squared, as the square of each decayed weight does.
    w2: mix(prior.w2, delta.w2, factor * factor),
    cr: mix(prior.cr, delta.cr),
    cn: mix(prior.cn, delta.cn),
    follow: mix(prior.follow, delta.follow),
    users: mix(prior.users, delta.users),
    favS: mix(prior.favS, delta.favS),
    favN: mix(prior.favN, delta.favN),
    otherS: mix(prior.otherS, delta.otherS),
    otherN: mix(prior.otherN, delta.otherN),
    neutral: mix(prior.neutral, delta.neutral),
    stepLikelihood: mix(prior.stepLikelihood, delta.stepLikelihood),
    rs: mix(prior.rs, delta.rs),
    rs2: mix(prior.rs2, delta.rs2),
    rn: mix(prior.rn, delta.rn),
    err: mix(prior.err, delta.err) as [number, number, number],
  };
}
