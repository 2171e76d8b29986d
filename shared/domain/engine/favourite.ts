import { COMPLEXITY_COUNT, CONTEXT_COUNT, MAX_VALUE_COUNT, VALUE_COUNT } from './layout';

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

/** A second model for favouritePosterior: the same but for its follower share, with its own outputs. */
export interface AlsoUnder {
  model: DimensionModel;
  out: Float64Array;
  logEvidence?: { log: number };
  /** Receives P(follower | evidence) under `model`. */
  follower: number;
}

/**
 * Writes P(favourite in context x = v | evidence) into `out` at every cell of the dimension in
 * the evidence's contexts and returns P(follower | evidence). When `logEvidence` is given, its
 * `log` is set to log P(evidence) up to a term that is the same for every way of grouping the
 * same outcomes into contexts (task-types.ts compares two). With `also`, the same is computed
 * under `also.model` — a model that differs from `model` in its follower share alone, so the
 * likelihoods are computed once for both. `scratch` is only worked in.
 */
export function favouritePosterior(
  model: DimensionModel,
  { n, s, contexts }: ContextEvidence,
  out: Float64Array,
  scratch: FavouriteScratch,
  logEvidence?: { log: number },
  also?: AlsoUnder,
): number {
  const { like, likeSum } = scratch;
  const { count: k, offset, weight, mid } = model;
  // Module constants read once into locals: the loops below are the engine's hottest.
  const values = VALUE_COUNT;
  const stride = MAX_VALUE_COUNT;
  const complexities = COMPLEXITY_COUNT;
  let shift = 0;
  for (let x = 0, c = 0; x < contexts; x++, c = c + 1 === complexities ? 0 : c + 1) {
    const base = x * values + offset;
    const at = x * stride;
    const m = mid[c]!;
    let max = -Infinity;
    for (let v = 0; v < k; v++) {
      const ll = weight * (s[base + v]! - n[base + v]! * m);
      like[at + v] = ll;
      if (ll > max) max = ll;
    }
    shift += max;
    let sum = 0;
    for (let v = 0; v < k; v++) {
      const l = Math.exp(like[at + v]! - max);
      like[at + v] = l;
      sum += l;
    }
    likeSum[x] = sum;
  }
  if (also) also.follower = mixture(also.model, contexts, shift, also.out, scratch, also.logEvidence);
  return mixture(model, contexts, shift, out, scratch, logEvidence);
}

/**
 * favouritePosterior's mixture over followers and core values, from the likelihoods in
 * `scratch` (scaled by e^−shift in all): writes P(favourite) into `out` and returns P(follower).
 */
function mixture(
  model: DimensionModel,
  contexts: number,
  shift: number,
  out: Float64Array,
  scratch: FavouriteScratch,
  logEvidence: { log: number } | undefined,
): number {
  const { like, likeSum, followAt, coreWeight, corePart } = scratch;
  const { count: k, offset, popBest, follow } = model;
  const persistence = PERSISTENCE;
  const values = VALUE_COUNT;
  const stride = MAX_VALUE_COUNT;
  const contextStride = CONTEXT_COUNT;
  const complexities = COMPLEXITY_COUNT;
  const other = (1 - persistence) / k;
  const individualShare = (1 - follow) / k;
  for (let g = 0; g < k; g++) coreWeight[g] = individualShare;
  // Each context's part of the follower's and of every core value's product (each product
  // multiplies its factors in context order).
  let follower = follow;
  for (let x = 0, c = 0; x < contexts; x++, c = c + 1 === complexities ? 0 : c + 1) {
    const at = x * stride;
    // Follower: favourites in the contexts are independent draws of the population's best at their complexity.
    const popBase = c * values + offset;
    let followHere = 0;
    for (let v = 0; v < k; v++) followHere += popBest[popBase + v]! * like[at + v]!;
    followAt[x] = followHere;
    follower *= followHere;
    // Individual with core value g.
    const sum = likeSum[x]!;
    for (let g = 0; g < k; g++) {
      const part = persistence * like[at + g]! + other * sum;
      corePart[g * contextStride + x] = part;
      coreWeight[g]! *= part;
    }
  }
  let individual = 0;
  for (let g = 0; g < k; g++) individual += coreWeight[g]!;
  const total = follower + individual;
  if (logEvidence) logEvidence.log = shift + Math.log(total);
  for (let x = 0, c = 0; x < contexts; x++, c = c + 1 === complexities ? 0 : c + 1) {
    const base = x * values + offset;
    const at = x * stride;
    const popBase = c * values + offset;
    const followHere = followAt[x]!;
    // Every core value g puts `other` on each value: that part is the same sum for all v, so it is
    // summed once (which also keeps tied values exactly tied).
    let anyCore = 0;
    for (let g = 0; g < k; g++) anyCore += coreWeight[g]! / corePart[g * contextStride + x]!;
    const anyPart = other * anyCore;
    for (let v = 0; v < k; v++) {
      const asFollower = (follower * popBest[popBase + v]!) / followHere;
      const asCore = (persistence * coreWeight[v]!) / corePart[v * contextStride + x]!;
      out[base + v] = (like[at + v]! * (asFollower + asCore + anyPart)) / total;
    }
  }
  return follower / total;
}
