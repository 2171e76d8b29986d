import { CONTEXT_COUNT, MAX_VALUE_COUNT, VALUE_COUNT, contextComplexity } from './layout';

/**
 * The favourite model of one dimension (docs/adr/0009-favourite-model.md).
 *
 * Each user has, in each context (task complexity × task type), a favourite value. An outcome's
 * reward credited to this dimension is Gaussian around `mid[c] ± step/2` — the upper level when
 * the value shown is the favourite, the lower one otherwise — with noise variance σ². Over the
 * favourites of all contexts the prior is a mixture of two kinds of users:
 *
 * - a follower (probability `follow`) likes what the population does: in each context the
 *   favourite is the population's best value at its complexity, which is known with
 *   probability popBest[c][v];
 * - an individual has a core value g (uniform) that is the favourite in each context with
 *   probability PERSISTENCE, any value otherwise.
 *
 * So what a user showed in one context carries to the others — more for an individual than
 * for a follower, whose favourites are the population's there. The posterior is exact: for
 * evidence n (weights) and s (weighted credited rewards) per context cell, value v in context x
 * has likelihood L_x(v) ∝ exp(step/σ² · (s_xv − n_xv · mid[c])), and the mixture sums over the
 * (at most five) core values. The result is each value's probability of being the favourite in
 * each context, and the probability that the user is a follower.
 */
export interface DimensionModel {
  /** First value slot of the dimension and its number of values. */
  offset: number;
  count: number;
  /** Share of users who follow the population. */
  follow: number;
  /** P(value is the population's best) per cell (complexity · VALUE_COUNT + slot); only this dimension's cells are read. */
  popBest: Float64Array;
  /** Midpoint between the non-favourite and the favourite level, per complexity. */
  mid: Float64Array;
  /** Favourite level − non-favourite level (Δ). */
  step: number;
  /** step / σ²: the log-likelihood ratio per unit of credited reward above the midpoint. */
  weight: number;
}

/**
 * Every DimensionModel the engine uses is made here, so that all share one object shape.
 * favouritePosterior reads a model's numbers as unboxed doubles only while it sees one shape:
 * once it had also seen a copy made by spreading a model with a follower share of exactly 0
 * (stored as a small integer), every call boxed its intermediate results, about 600 bytes of
 * garbage a call (20 KB per update, 11 KB per decision in bench:engine).
 */
export const dimensionModel = (model: DimensionModel): DimensionModel => ({
  offset: model.offset,
  count: model.count,
  follow: model.follow,
  popBest: model.popBest,
  mid: model.mid,
  step: model.step,
  weight: model.weight,
});

/** An individual's favourite in a context is their core value with this probability. */
export const PERSISTENCE = 0.7;

/** favouritePosterior's working arrays (one set per engine, scratch.ts): per context and value, likelihoods and their parts. */
export interface FavouriteScratch {
  like: Float64Array;
  likeSum: Float64Array;
  followAt: Float64Array;
  coreWeight: Float64Array;
  corePart: Float64Array;
}

export const favouriteScratch = (): FavouriteScratch => ({
  like: new Float64Array(CONTEXT_COUNT * MAX_VALUE_COUNT),
  likeSum: new Float64Array(CONTEXT_COUNT),
  followAt: new Float64Array(CONTEXT_COUNT),
  coreWeight: new Float64Array(MAX_VALUE_COUNT),
  corePart: new Float64Array(MAX_VALUE_COUNT * CONTEXT_COUNT),
});

/** A user's evidence per context cell (x · VALUE_COUNT + slot): decayed weights n and credited sums s in contexts 0…contexts − 1. */
export interface ContextEvidence {
  n: ArrayLike<number>;
  s: ArrayLike<number>;
  contexts: number;
}

/**
 * Writes P(favourite in context x = v | evidence) into `out` at every cell of the dimension in
 * the evidence's contexts and returns P(follower | evidence). When `logEvidence` is given, its
 * `log` is set to log P(evidence) up to a term that is the same for every way of grouping the
 * same outcomes into contexts (task-types.ts compares two). `scratch` is only worked in.
 */
export function favouritePosterior(
  model: DimensionModel,
  { n, s, contexts }: ContextEvidence,
  out: Float64Array,
  scratch: FavouriteScratch,
  logEvidence?: { log: number },
): number {
  const { like, likeSum, followAt, coreWeight, corePart } = scratch;
  const k = model.count;
  let shift = 0;
  for (let x = 0; x < contexts; x++) {
    const base = x * VALUE_COUNT + model.offset;
    const mid = model.mid[contextComplexity(x)]!;
    let max = -Infinity;
    for (let v = 0; v < k; v++) {
      const ll = model.weight * (s[base + v]! - n[base + v]! * mid);
      like[x * MAX_VALUE_COUNT + v] = ll;
      if (ll > max) max = ll;
    }
    shift += max;
    let sum = 0;
    for (let v = 0; v < k; v++) {
      const l = Math.exp(like[x * MAX_VALUE_COUNT + v]! - max);
      like[x * MAX_VALUE_COUNT + v] = l;
      sum += l;
    }
    likeSum[x] = sum;
  }
  // Follower: favourites in the contexts are independent draws of the population's best at their complexity.
  let follower = model.follow;
  for (let x = 0; x < contexts; x++) {
    let sum = 0;
    const base = contextComplexity(x) * VALUE_COUNT + model.offset;
    for (let v = 0; v < k; v++) sum += model.popBest[base + v]! * like[x * MAX_VALUE_COUNT + v]!;
    followAt[x] = sum;
    follower *= sum;
  }
  // Individual with core value g.
  const other = (1 - PERSISTENCE) / k;
  let individual = 0;
  for (let g = 0; g < k; g++) {
    let w = (1 - model.follow) / k;
    for (let x = 0; x < contexts; x++) {
      const part = PERSISTENCE * like[x * MAX_VALUE_COUNT + g]! + other * likeSum[x]!;
      corePart[g * CONTEXT_COUNT + x] = part;
      w *= part;
    }
    coreWeight[g] = w;
    individual += w;
  }
  const total = follower + individual;
  if (logEvidence) logEvidence.log = shift + Math.log(total);
  for (let x = 0; x < contexts; x++) {
    const base = x * VALUE_COUNT + model.offset;
    const popBase = contextComplexity(x) * VALUE_COUNT + model.offset;
    // Every core value g puts `other` on each value: that part is the same sum for all v, so it is
    // summed once (which also keeps tied values exactly tied).
    let anyCore = 0;
    for (let g = 0; g < k; g++) anyCore += coreWeight[g]! / corePart[g * CONTEXT_COUNT + x]!;
    for (let v = 0; v < k; v++) {
      const l = like[x * MAX_VALUE_COUNT + v]!;
      const asFollower = (follower * model.popBest[popBase + v]!) / followAt[x]!;
      const asCore = (PERSISTENCE * coreWeight[v]!) / corePart[v * CONTEXT_COUNT + x]!;
      out[base + v] = (l * (asFollower + asCore + other * anyCore)) / total;
    }
  }
  return follower / total;
}
