import { z } from 'zod';
import { DIMENSION_NAMES, type Dimension } from '../arms';
import type { DimensionModel } from './favourite';
import { NEUTRAL_GRID, addNeutralEvidence, neutralLogit } from './neutral-share';
import { CELL_COUNT, COMPLEXITY_COUNT, DIMENSION_OFFSET, MAX_VALUE_COUNT, cellIndex, roundSignificant, valueCount, zeros } from './layout';
import { probabilityLargest } from './normal';

/**
 * Population prior of one (account, environment): what the favourite model of each dimension
 * (favourite.ts) needs to know about the tenant's users, kept by the worker as decayed sums so
 * that batches merge by addition (mergePopulation) — docs/adr/0009-favourite-model.md.
 *
 * - The population's best value per (complexity, dimension) comes from self-normalised
 *   inverse-propensity means of the reward credited to each value (weights 1/p capped at
 *   MAX_WEIGHT); popBest is each value's probability of being the best under those means'
 *   uncertainty (effective sample size (Σw)²/Σw², Kish).
 * - The follower share and the favourite and non-favourite reward levels are estimated by online
 *   EM: after each outcome the user's posterior is added as a moving average — P(follower)
 *   weighted by how much evidence the user has, and one outcome's worth of the split of their
 *   evidence between favourite and other levels.
 *   Each dimension's step is at least the lower confidence bound of its best value's lead in
 *   the inverse-propensity means (leadLowerBound), which needs no credit assignment.
 * - Per-complexity reward levels (harder tasks start less often) and the spread of prediction
 *   errors (for the change detector) are plain moving averages.
 * - The share of users whose task types do not change their favourites (task-types.ts) is the
 *   maximum of a log-likelihood kept at NEUTRAL_GRID's points (neutral-share.ts).
 */
const cells = z.array(z.number()).length(CELL_COUNT);
const perDimension = z.array(z.number()).length(DIMENSION_NAMES.length);
const perComplexity = z.array(z.number()).length(COMPLEXITY_COUNT);

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
/** Pseudo-outcomes of effective sample size pulling a value's mean toward the typical tried value's (see compilePopulation). */
export const MEAN_SHRINK = 3;
/**
 * Floor on the standard error of a value's mean (added in quadrature to the sampling error).
 * The capped inverse-propensity means are biased by more than their sampling error says — a
 * value the population rarely shows is shown mostly to new users — so popBest must not become
 * certain of a favourite that leads by less than this. Without it, the minor dimensions'
 * population favourite was often the wrong value held with confidence, and a 100-user tenant's
 * ECE was 0.051 instead of 0.040 (seeds 1–16), at no cost to a 500-user tenant's reward.
 */
export const MEAN_BIAS = 0.01;
/**
 * The prior's strength is capped: however many of a tenant's users follow the population, at
 * least 1 in 20 of a new user's prior goes to their having a favourite of their own, so a
 * few of their own outcomes always overturn the population's favourite (issue 4: empirical
 * Bayes with a capped prior strength).
 */
export const MAX_FOLLOW = 0.95;
/** Pseudo-outcomes behind the default levels. */
const LEVEL_PRIOR = 5;
/**
 * Until a tenant's data says otherwise, a user's favourite framing is assumed to add 0.3 to the
 * reward and a favourite of each other dimension 0.1: how a task is framed is what the product
 * expects to matter most. (With one step for all four, a user always shown the same style
 * would have each success split four ways, and a new tenant would learn nothing for a while.)
 */
export const DEFAULT_STEP: Record<Dimension, number> = { framing: 0.3, style: 0.1, complexity: 0.1, encouragement: 0.1 };
const DEFAULT_MEAN = 0.5;
const DEFAULT_VARIANCE = 0.12;
const MIN_STEP = 0.005;
const MIN_NOISE = 0.02;
const MIN_POP_BEST = 1e-4;
/** Standard errors below the population best's lead taken as the floor of a dimension's step. */
const LEAD_SDS = 2;
/** An offset per complexity is used once the complexity has this many outcomes. */
const MIN_COMPLEXITY_EVENTS = 5;
/** The prediction errors' spread is used once it rests on this many outcomes. */
const MIN_ERRORS = 20;

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

/** What the engine uses of a population prior, derived once per prior object. */
export interface CompiledPopulation {
  dimensions: DimensionModel[];
  /** Reward level of each complexity relative to the overall mean. */
  offsets: Float64Array;
  /** Non-favourite level per dimension (without the complexity offset). */
  baseLevel: Float64Array;
  /** Root mean square of whole rewards' prediction errors (bias included: err[0]'s Σ error is kept, not used). */
  predictionSd: number;
  /** Logit of the prior share of users whose favourites are the same in all their task types (task-types.ts). */
  typeNeutralLogit: number;
  /** Credited-reward means per cell (the population's best is their argmax). */
  mean: Float64Array;
  /** Raw outcome count and mean reward per cell. */
  support: Float64Array;
  rawMean: Float64Array;
  /** Raw outcome count per complexity (the same as a dimension's support summed over its values). */
  outcomes: Float64Array;
}

/** The other dimensions' expected part of a new user's reward under the default steps. */
const otherDimensionsShare = (dim: Dimension): number =>
  DIMENSION_NAMES.reduce((sum, other) => (other === dim ? sum : sum + DEFAULT_STEP[other] / valueCount(other)), 0);

const compiled = new WeakMap<PopulationPrior, CompiledPopulation>();
const means = new Float64Array(MAX_VALUE_COUNT);
const sds = new Float64Array(MAX_VALUE_COUNT);

/** Kish effective sample size of a cell's inverse-propensity weights, (Σ w)² / Σ w²; 0 for a cell without outcomes. */
const effectiveSize = (prior: PopulationPrior, cell: number): number =>
  prior.w2[cell]! > 0 ? (prior.w[cell]! * prior.w[cell]!) / prior.w2[cell]! : 0;

function complexityOffsets(prior: PopulationPrior): Float64Array {
  let total = 0;
  let count = 0;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    total += prior.cr[c]!;
    count += prior.cn[c]!;
  }
  const overall = count > 0 ? total / count : 0;
  return Float64Array.from({ length: COMPLEXITY_COUNT }, (_, c) =>
    prior.cn[c]! >= MIN_COMPLEXITY_EVENTS ? prior.cr[c]! / prior.cn[c]! - overall : 0,
  );
}

/**
 * A lower confidence bound (LEAD_SDS standard errors) on how far the mean credited reward of the
 * population's best value (`best`) lies above that of the dimension's other values at a
 * complexity, from the unshrunk inverse-propensity means; 0 when there is too little data.
 *
 * Why it bounds the step: the values of the four dimensions are chosen independently of one
 * another, so in an inverse-propensity mean of one dimension's value the others' contributions
 * are the same whichever value was shown, and the lead of the population's best is Δ × (the
 * share of users whose favourite it is, less the share of those whose favourite is another) ≤ Δ.
 * Unlike the levels' EM, this needs no credit assignment: when nearly every user follows the
 * population, every user is shown the same values of all four dimensions and EM alone could hand
 * one dimension's effect to another.
 */
function leadLowerBound(prior: PopulationPrior, c: number, offset: number, count: number, best: number, variance: number): number {
  const bestCell = cellIndex(c, offset + best);
  const bestSize = effectiveSize(prior, bestCell);
  let restSize = 0;
  let restSum = 0;
  for (let i = 0; i < count; i++) {
    const cell = cellIndex(c, offset + i);
    const size = effectiveSize(prior, cell);
    if (i === best || size <= 0) continue;
    restSize += size;
    restSum += (size * prior.wr[cell]!) / prior.w[cell]!;
  }
  if (bestSize <= 0 || restSize <= 0) return 0;
  const lead = prior.wr[bestCell]! / prior.w[bestCell]! - restSum / restSize;
  return Math.max(0, lead - LEAD_SDS * Math.sqrt(variance / bestSize + variance / restSize));
}

export function compilePopulation(prior: PopulationPrior): CompiledPopulation {
  const cached = compiled.get(prior);
  if (cached) return cached;
  const offsets = complexityOffsets(prior);
  const result: CompiledPopulation = {
    dimensions: [],
    offsets,
    baseLevel: new Float64Array(DIMENSION_NAMES.length),
    predictionSd: 0,
    typeNeutralLogit: neutralLogit(prior.neutral),
    mean: new Float64Array(CELL_COUNT),
    support: Float64Array.from(prior.n),
    rawMean: Float64Array.from(prior.n, (n, cell) => (n > 0 ? prior.r[cell]! / n : 0)),
    outcomes: Float64Array.from(prior.cn),
  };
  DIMENSION_NAMES.forEach((dim, d) => {
    const offset = DIMENSION_OFFSET[dim];
    const count = valueCount(dim);
    const rn = prior.rn[d]!;
    // The reward credited to this dimension: a whole reward less the others' expected part.
    const mean = rn > 0 ? prior.rs[d]! / rn : DEFAULT_MEAN - otherDimensionsShare(dim);
    const variance = rn > 1 ? Math.max(0.01, prior.rs2[d]! / rn - mean * mean) : DEFAULT_VARIANCE;
    const popBest = new Float64Array(CELL_COUNT);
    // The population's best value's lead over the others, per complexity: a lower bound on the step.
    let floorSum = 0;
    let floorWeight = 0;
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      let w = 0;
      for (let i = 0; i < count; i++) w += prior.w[cellIndex(c, offset + i)]!;
      // What a value nobody has tried is expected to earn: the average of the tried values' means,
      // each weighted by how reliable it is (effective size / (effective size + MEAN_SHRINK)), not
      // by its outcomes — which would make it about the most-shown value's, i.e. the favourite's.
      let reliability = 0;
      let weighted = 0;
      for (let i = 0; i < count; i++) {
        const cell = cellIndex(c, offset + i);
        const effective = effectiveSize(prior, cell);
        if (effective <= 0) continue;
        const r = effective / (effective + MEAN_SHRINK);
        reliability += r;
        weighted += (r * prior.wr[cell]!) / prior.w[cell]!;
      }
      const dimensionMean = reliability > 0 ? weighted / reliability : mean;
      for (let i = 0; i < count; i++) {
        const cell = cellIndex(c, offset + i);
        const cw = prior.w[cell]!;
        const effective = effectiveSize(prior, cell);
        const estimate = cw > 0 ? prior.wr[cell]! / cw : dimensionMean;
        means[i] = (effective * estimate + MEAN_SHRINK * dimensionMean) / (effective + MEAN_SHRINK);
        sds[i] = Math.sqrt(variance / (effective + MEAN_SHRINK) + MEAN_BIAS * MEAN_BIAS);
        result.mean[cell] = means[i]!;
      }
      let total = 0;
      for (let i = 0; i < count; i++)
        total += popBest[cellIndex(c, offset + i)] = Math.max(MIN_POP_BEST, probabilityLargest(i, means, sds, count));
      for (let i = 0; i < count; i++) popBest[cellIndex(c, offset + i)]! /= total;
      if (w > 0) {
        let best = 0;
        for (let i = 1; i < count; i++) if (means[i]! > means[best]!) best = i;
        floorSum += w * leadLowerBound(prior, c, offset, count, best, variance);
        floorWeight += w;
      }
    }
    // Defaults: a new user's favourite is one value in `count`, so the mean is other + step / count.
    const defaultStep = DEFAULT_STEP[dim];
    const favourite = (prior.favS[d]! + LEVEL_PRIOR * (mean + defaultStep * (1 - 1 / count))) / (prior.favN[d]! + LEVEL_PRIOR);
    const emOther = (prior.otherS[d]! + LEVEL_PRIOR * (mean - defaultStep / count)) / (prior.otherN[d]! + LEVEL_PRIOR);
    const stepFloor = floorWeight > 0 ? floorSum / floorWeight : 0;
    const step = Math.max(MIN_STEP, favourite - emOther, stepFloor);
    // Share of the outcomes at a favourite. A step widened by the floor keeps the levels' mean.
    const share = (prior.favN[d]! + 1) / (prior.favN[d]! + prior.otherN[d]! + 2);
    const other = emOther - share * (step - (favourite - emOther));
    // Within-level noise: the credited reward's variance less the part the levels explain.
    const noise = Math.max(MIN_NOISE, variance - step * step * share * (1 - share));
    result.baseLevel[d] = other;
    result.dimensions.push({
      offset,
      count,
      follow: Math.min(MAX_FOLLOW, (prior.follow[d]! + 1) / (prior.users[d]! + 2)),
      popBest,
      mid: Float64Array.from(offsets, (o) => other + o + step / 2),
      step,
      weight: step / noise,
    });
  });
  const [, e2, en] = prior.err;
  result.predictionSd = Math.sqrt(en >= MIN_ERRORS ? Math.max(MIN_NOISE, e2 / en) : DEFAULT_VARIANCE);
  compiled.set(prior, result);
  return result;
}

/** What one outcome adds to a population delta (all computed by the engine). */
export interface PopulationObservation {
  complexity: number;
  /** Cell of the value shown, per dimension. */
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
}

/** Adds one outcome to a population delta (a PopulationPrior holding only new evidence). */
export function observePopulation(delta: PopulationPrior, prior: CompiledPopulation, o: PopulationObservation): void {
  delta.events += 1;
  delta.cr[o.complexity]! += o.reward;
  delta.cn[o.complexity]! += 1;
  for (let d = 0; d < DIMENSION_NAMES.length; d++) {
    const cell = o.cells[d]!;
    const weight = 1 / Math.max(o.probabilities[d]!, 1 / MAX_WEIGHT); // ≤ MAX_WEIGHT
    delta.n[cell]! += 1;
    delta.r[cell]! += o.reward;
    delta.w[cell]! += weight;
    delta.wr[cell]! += weight * o.credited[d]!;
    delta.w2[cell]! += weight * weight;
    const centred = o.credited[d]! - prior.offsets[o.complexity]!;
    delta.rs[d]! += centred;
    delta.rs2[d]! += centred * centred;
    delta.rn[d]! += 1;
    delta.follow[d]! += o.userWeight[d]! * o.follower[d]!;
    delta.users[d]! += o.userWeight[d]!;
    delta.favS[d]! += o.favS[d]!;
    delta.favN[d]! += o.favN[d]!;
    delta.otherS[d]! += o.otherS[d]!;
    delta.otherN[d]! += o.otherN[d]!;
  }
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
    rs: mix(prior.rs, delta.rs),
    rs2: mix(prior.rs2, delta.rs2),
    rn: mix(prior.rn, delta.rn),
    err: mix(prior.err, delta.err) as [number, number, number],
  };
}
