import { DIMENSION_NAMES, type Dimension } from '../arms';
import { dimensionModel, type DimensionModel } from './favourite';
import { neutralLogit } from './neutral-share';
import { noiseSharpness } from './noise-sharpness';
import { CELL_COUNT, COMPLEXITY_COUNT, DIMENSION_OFFSET, MAX_VALUE_COUNT, argmax, cellIndex, valueCount } from './layout';
import { probabilityLargest } from './normal';
import type { PopulationPrior } from './population';

/**
 * What the favourite model of each dimension (favourite.ts) needs to know about a tenant's
 * users, derived from the population prior's sums (population.ts) once: a CompiledPopulation
 * is the prior as the engine takes it (the Learner's `Prior`), made where a stored prior is
 * read and when one is merged — docs/adr/0009-favourite-model.md.
 *
 * - The population's best value per (complexity, dimension) comes from self-normalised
 *   inverse-propensity means of the reward credited to each value (weights 1/p capped at
 *   population.ts's MAX_WEIGHT); popBest is each value's probability of being the best under
 *   those means' uncertainty (effective sample size (Σw)²/Σw², Kish).
 * - The follower share and the favourite and non-favourite reward levels are estimated by online
 *   EM: after each outcome the user's posterior is added as a moving average — P(follower)
 *   weighted by how much evidence the user has, and one outcome's worth of the split of their
 *   evidence between favourite and other levels.
 *   Each dimension's step is at least the lower confidence bound of its best value's lead in
 *   the inverse-propensity means (leadLowerBound), which needs no credit assignment, and at
 *   least the within-user contrast's estimate (contrastStep), which needs no population favourite.
 * - Per-complexity reward levels (harder tasks start less often) and the spread of prediction
 *   errors (for the change detector) are plain moving averages.
 * - The share of users whose task types do not change their favourites (task-types.ts) is the
 *   maximum of a log-likelihood kept at NEUTRAL_GRID's points (neutral-share.ts).
 */

/** Pseudo-outcomes of effective sample size pulling a value's mean toward the typical tried value's (see compilePopulation). */
export const MEAN_SHRINK = 3;
/**
 * Floor on the standard error of a value's mean (added in quadrature to the sampling error).
 * The capped inverse-propensity means are biased by more than their sampling error says — a
 * value the population rarely shows is shown mostly to new users — so popBest must not become
 * certain of a favourite that leads by less than this: without it, a small tenant was often
 * confident of the wrong population favourite of a minor dimension (ADR 0009 decision 3).
 */
export const MEAN_BIAS = 0.01;
/**
 * The prior's strength is capped: however many of a tenant's users follow the population, at
 * least 1 in 20 of a new user's prior goes to their having a favourite of their own, so a
 * few of their own outcomes always overturn the population's favourite (empirical
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
export const DEFAULT_STEP: Record<Dimension, number> = { framing: 0.3, style: 0.1, complexityHandling: 0.1, encouragement: 0.1 };
const DEFAULT_MEAN = 0.5;
const DEFAULT_VARIANCE = 0.12;
const MIN_STEP = 0.005;
const MIN_NOISE = 0.02;
const MIN_POP_BEST = 1e-4;
/** Standard errors below the population best's lead taken as the floor of a dimension's step. */
const LEAD_SDS = 2;
/** A within-user contrast is used once a unit step would add this much to its sums. */
const MIN_CONTRAST_SCALE = 50;
/** An offset per complexity is used once the complexity has this many outcomes. */
const MIN_COMPLEXITY_EVENTS = 5;
/** The prediction errors' spread is used once it rests on this many outcomes. */
const MIN_ERRORS = 20;

/** What a user's posterior (task-types.ts's userPosterior) is computed from. */
export type FavouriteModels = Pick<CompiledPopulation, 'dimensions' | 'typeNeutralLogit'>;

/** What the engine uses of a population prior, derived once from its sums; never changed. */
export interface CompiledPopulation {
  /** The sums it is derived from: what is stored, and what a merge adds to. */
  sums: PopulationPrior;
  dimensions: DimensionModel[];
  /** The models a decision chooses by: the same, with the follower share φ · min(1, s / KNOWN_SHARPNESS) (choosingShare). */
  choosing: FavouriteModels;
  /** Per dimension, the sharpness popBest would show per complexity if every value were alike (noise-sharpness.ts). */
  popBestNoise: Float64Array[];
  /** Reward level of each complexity relative to the overall mean. */
  offsets: Float64Array;
  /** Non-favourite level per dimension (without the complexity offset). */
  baseLevel: Float64Array;
  /** Root mean square of whole rewards' prediction errors (bias included: their Σ, predictionErrorSum, is kept, not used). */
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

/** Kish effective sample size of a cell's inverse-propensity weights, (Σ w)² / Σ w²; 0 for a cell without outcomes. */
const effectiveSize = (prior: PopulationPrior, cell: number): number =>
  prior.ipsWeightSquares[cell]! > 0 ? (prior.ipsWeight[cell]! * prior.ipsWeight[cell]!) / prior.ipsWeightSquares[cell]! : 0;

function complexityOffsets(prior: PopulationPrior): Float64Array {
  let total = 0;
  let count = 0;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    total += prior.complexityRewardSum[c]!;
    count += prior.complexityCount[c]!;
  }
  const overall = count > 0 ? total / count : 0;
  return Float64Array.from({ length: COMPLEXITY_COUNT }, (_, c) =>
    prior.complexityCount[c]! >= MIN_COMPLEXITY_EVENTS ? prior.complexityRewardSum[c]! / prior.complexityCount[c]! - overall : 0,
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
function leadLowerBound(
  prior: PopulationPrior,
  { c, offset, count, best, variance }: { c: number; offset: number; count: number; best: number; variance: number },
): number {
  const bestCell = cellIndex(c, offset + best);
  const bestSize = effectiveSize(prior, bestCell);
  let restSize = 0;
  let restSum = 0;
  for (let i = 0; i < count; i++) {
    const cell = cellIndex(c, offset + i);
    const size = effectiveSize(prior, cell);
    if (i === best || size <= 0) continue;
    restSize += size;
    restSum += (size * prior.ipsCreditedSum[cell]!) / prior.ipsWeight[cell]!;
  }
  if (bestSize <= 0 || restSize <= 0) return 0;
  const lead = prior.ipsCreditedSum[bestCell]! / prior.ipsWeight[bestCell]! - restSum / restSize;
  return Math.max(0, lead - LEAD_SDS * Math.sqrt(variance / bestSize + variance / restSize));
}

/**
 * The step by the method of moments on within-user contrasts (expectation.ts's
 * withinUserContrast): Δ² ≈ Σ excess / Σ scale over the tenant's outcomes. Unlike the levels'
 * EM it does not need the users' posteriors to be sharp already, so it finds a step that every
 * user has but no population favourite shows (docs/adr/0009-favourite-model.md, decision 3).
 */
function contrastStep(prior: PopulationPrior, d: number): number {
  const scale = prior.contrastScale[d]!;
  if (scale < MIN_CONTRAST_SCALE) return 0;
  const squared = prior.contrastExcess[d]! / scale;
  return squared > 0 ? Math.sqrt(squared) : 0;
}

/**
 * How sharply the population's favourite is known beyond what noise alone shows: with the
 * averages over the complexities by the tenant's outcomes n_c at each,
 *
 *     s̄ = Σ_c n_c · (Σ_v π_c(v)² − 1/k) / (1 − 1/k) / Σ_c n_c,    s̄₀ = Σ_c n_c · s₀_c / Σ_c n_c,
 *     s = max(0, (s̄ − s̄₀) / (1 − s̄₀))
 *
 * where s₀_c is the sharpness a complexity's popBest shows when its values are all alike (`noise`;
 * noise-sharpness.ts), so s̄₀ is what s̄ reads on average without a population favourite. 1 when
 * one value is certainly the best, 0 when the values differ no more than noise makes them (and
 * without outcomes).
 */
export function popBestSharpness(
  { popBest, offset, count }: DimensionModel,
  outcomes: ArrayLike<number>,
  noise: ArrayLike<number>,
): number {
  if (count < 2) return 0;
  let sharpness = 0;
  let expected = 0;
  let weight = 0;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    if (!(outcomes[c]! > 0)) continue;
    let agree = 0;
    for (let i = 0; i < count; i++) agree += popBest[cellIndex(c, offset + i)]! ** 2;
    sharpness += (outcomes[c]! * (agree - 1 / count)) / (1 - 1 / count);
    expected += outcomes[c]! * noise[c]!;
    weight += outcomes[c]!;
  }
  if (!(weight > 0)) return 0;
  const floor = expected / weight;
  return Math.min(1, Math.max(0, (sharpness / weight - floor) / (1 - floor)));
}

/**
 * A decision explores under the follower share φ · min(1, s / KNOWN_SHARPNESS). Where the
 * population's favourite is not known, a follower predicts what an individual does in one
 * context, and the outcomes cannot tell how many users follow (EM's φ stays near where it
 * started), so a decision leans toward the user's own favourites — which carry across contexts —
 * while the beliefs (confidence, credit, EM) keep the learned φ. A favourite known a little
 * beyond noise counts as known: a real but weak one (a style 60% of users share, worth a few
 * points of success) is known only that much among hundreds of users, and following it is what
 * serves them (docs/adr/0009-favourite-model.md, decision 4).
 */
export const KNOWN_SHARPNESS = 0.08;

/** φ · min(1, s / KNOWN_SHARPNESS): the follower share a decision explores under (`outcomes` and `noise` per complexity). */
export const choosingShare = (model: DimensionModel, outcomes: ArrayLike<number>, noise: ArrayLike<number>): number =>
  model.follow * Math.min(1, popBestSharpness(model, outcomes, noise) / KNOWN_SHARPNESS);

/** What the model makes of a prior's sums (the prior is not changed, and is kept as `sums`). */
export function compilePopulation(prior: PopulationPrior): CompiledPopulation {
  const means = new Float64Array(MAX_VALUE_COUNT);
  const sds = new Float64Array(MAX_VALUE_COUNT);
  const offsets = complexityOffsets(prior);
  const choosing: DimensionModel[] = [];
  const typeNeutralLogit = neutralLogit(prior.neutralLogLikelihood);
  const result: CompiledPopulation = {
    sums: prior,
    dimensions: [],
    choosing: { dimensions: choosing, typeNeutralLogit },
    popBestNoise: [],
    offsets,
    baseLevel: new Float64Array(DIMENSION_NAMES.length),
    predictionSd: 0,
    typeNeutralLogit,
    mean: new Float64Array(CELL_COUNT),
    support: Float64Array.from(prior.shownCount),
    rawMean: Float64Array.from(prior.shownCount, (n, cell) => (n > 0 ? prior.rewardSum[cell]! / n : 0)),
    outcomes: Float64Array.from(prior.complexityCount),
  };
  DIMENSION_NAMES.forEach((dim, d) => {
    const offset = DIMENSION_OFFSET[dim];
    const count = valueCount(dim);
    const rn = prior.creditedCount[d]!;
    // The reward credited to this dimension: a whole reward less the others' expected part.
    const mean = rn > 0 ? prior.creditedSum[d]! / rn : DEFAULT_MEAN - otherDimensionsShare(dim);
    const variance = rn > 1 ? Math.max(0.01, prior.creditedSquares[d]! / rn - mean * mean) : DEFAULT_VARIANCE;
    const popBest = new Float64Array(CELL_COUNT);
    const popBestNoise = new Float64Array(COMPLEXITY_COUNT);
    // The population's best value's lead over the others, per complexity: a lower bound on the step.
    let floorSum = 0;
    let floorWeight = 0;
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      let w = 0;
      for (let i = 0; i < count; i++) w += prior.ipsWeight[cellIndex(c, offset + i)]!;
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
        weighted += (r * prior.ipsCreditedSum[cell]!) / prior.ipsWeight[cell]!;
      }
      const dimensionMean = reliability > 0 ? weighted / reliability : mean;
      // Σ of the means' variances from sampling alone, and Σ of the variances popBest assumes.
      let sampling = 0;
      let assumed = 0;
      for (let i = 0; i < count; i++) {
        const cell = cellIndex(c, offset + i);
        const cw = prior.ipsWeight[cell]!;
        const effective = effectiveSize(prior, cell);
        const estimate = cw > 0 ? prior.ipsCreditedSum[cell]! / cw : dimensionMean;
        means[i] = (effective * estimate + MEAN_SHRINK * dimensionMean) / (effective + MEAN_SHRINK);
        sds[i] = Math.sqrt(variance / (effective + MEAN_SHRINK) + MEAN_BIAS * MEAN_BIAS);
        result.mean[cell] = means[i]!;
        // A shrunk mean's sampling deviation is effective / (effective + MEAN_SHRINK) of the estimate's.
        sampling += (variance * effective) / (effective + MEAN_SHRINK) ** 2;
        assumed += sds[i]! * sds[i]!;
      }
      popBestNoise[c] = noiseSharpness(count, Math.sqrt(sampling / assumed));
      let total = 0;
      for (let i = 0; i < count; i++)
        total += popBest[cellIndex(c, offset + i)] = Math.max(MIN_POP_BEST, probabilityLargest(i, means, sds, count));
      for (let i = 0; i < count; i++) popBest[cellIndex(c, offset + i)]! /= total;
      if (w > 0) {
        floorSum += w * leadLowerBound(prior, { c, offset, count, best: argmax(means, 0, count), variance });
        floorWeight += w;
      }
    }
    // Defaults: a new user's favourite is one value in `count`, so the mean is other + step / count.
    const defaultStep = DEFAULT_STEP[dim];
    const favourite =
      (prior.favouriteLevelSum[d]! + LEVEL_PRIOR * (mean + defaultStep * (1 - 1 / count))) / (prior.favouriteLevelWeight[d]! + LEVEL_PRIOR);
    const emOther = (prior.otherLevelSum[d]! + LEVEL_PRIOR * (mean - defaultStep / count)) / (prior.otherLevelWeight[d]! + LEVEL_PRIOR);
    const stepFloor = floorWeight > 0 ? floorSum / floorWeight : 0;
    const contrast = contrastStep(prior, d);
    const step = Math.max(MIN_STEP, favourite - emOther, stepFloor, contrast);
    // Share of the outcomes at a favourite. A step widened by the floor keeps the levels' mean.
    const share = (prior.favouriteLevelWeight[d]! + 1) / (prior.favouriteLevelWeight[d]! + prior.otherLevelWeight[d]! + 2);
    const other = emOther - share * (step - (favourite - emOther));
    // Within-level noise: the credited reward's variance less the part the levels explain.
    const noise = Math.max(MIN_NOISE, variance - step * step * share * (1 - share));
    result.baseLevel[d] = other;
    const model = dimensionModel({
      offset,
      count,
      follow: Math.min(MAX_FOLLOW, (prior.followerSum[d]! + 1) / (prior.userWeight[d]! + 2)),
      popBest,
      mid: Float64Array.from(offsets, (o) => other + o + step / 2),
      step,
      weight: step / noise,
    });
    result.dimensions.push(model);
    result.popBestNoise.push(popBestNoise);
    choosing.push(dimensionModel({ ...model, follow: choosingShare(model, prior.complexityCount, popBestNoise) }));
  });
  // Where every share is the learned one, a decision chooses by the beliefs themselves (choosingBeliefs reuses them).
  if (choosing.every((model, d) => model.follow === result.dimensions[d]!.follow)) result.choosing.dimensions = result.dimensions;
  const { predictionErrorSquares, predictionErrorCount } = prior;
  result.predictionSd = Math.sqrt(
    predictionErrorCount >= MIN_ERRORS ? Math.max(MIN_NOISE, predictionErrorSquares / predictionErrorCount) : DEFAULT_VARIANCE,
  );
  return result;
}
