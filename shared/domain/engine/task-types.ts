import { DIMENSION_NAMES } from '../arms';
import { favouritePosterior, favouriteScratch, type ContextEvidence, type FavouriteScratch } from './favourite';
import { CELL_COUNT, COMPLEXITY_COUNT, VALUE_COUNT } from './layout';
import { logistic } from './neutral-share';
import type { FavouriteModels } from './population-model';

/**
 * Whether a user's task types matter (docs/adr/0009-favourite-model.md). A user whose requests
 * carry task types has, besides the untyped contexts, one context per (complexity, task type).
 * Two models explain the same outcomes:
 *
 * - neutral: the user's favourite at a complexity is the same whatever the task type, so all of
 *   the complexity's evidence is pooled (favouritePosterior over the complexities alone);
 * - typed: each (complexity, task type) is a context of its own (favouritePosterior over all).
 *
 * The user is one or the other for all four dimensions at once — the framing's evidence speaks
 * for the minor dimensions, which alone would hardly tell — with the tenant's prior share
 * (its logit `typeNeutralLogit`, learned by maximum likelihood, neutral-share.ts). Both models'
 * evidences are of the same outcomes, so P(neutral | evidence) is exact, and the beliefs are
 * the two posteriors mixed by it.
 */

/** userPosterior's working arrays (one set per engine, scratch.ts), with favouritePosterior's. */
export interface PosteriorScratch {
  favourite: FavouriteScratch;
  /** The neutral model's evidence: every context's pooled at its complexity. */
  pooled: { n: Float64Array; s: Float64Array; contexts: number };
  /** The neutral model's P(favourite) per cell of a complexity, and P(follower) per dimension. */
  neutralFavourite: Float64Array;
  neutralFollower: Float64Array;
  logEvidence: { log: number };
  /** The same for the second models of userPosterior's `also`. */
  alsoNeutralFavourite: Float64Array;
  alsoNeutralFollower: Float64Array;
  alsoLogEvidence: { log: number };
}

export const posteriorScratch = (): PosteriorScratch => ({
  favourite: favouriteScratch(),
  pooled: { n: new Float64Array(CELL_COUNT), s: new Float64Array(CELL_COUNT), contexts: COMPLEXITY_COUNT },
  neutralFavourite: new Float64Array(CELL_COUNT),
  neutralFollower: new Float64Array(DIMENSION_NAMES.length),
  logEvidence: { log: 0 },
  alsoNeutralFavourite: new Float64Array(CELL_COUNT),
  alsoNeutralFollower: new Float64Array(DIMENSION_NAMES.length),
  alsoLogEvidence: { log: 0 },
});

/** Sums the evidence of every context at each complexity into the complexity's cells of `pooled` (in context order). */
function pool({ n, s, contexts }: ContextEvidence, pooled: PosteriorScratch['pooled']): void {
  const { n: pooledN, s: pooledS } = pooled;
  const cells = CELL_COUNT;
  const values = VALUE_COUNT;
  for (let cell = 0; cell < cells; cell++) {
    pooledN[cell] = 0;
    pooledS[cell] = 0;
  }
  // Context x's cells follow on from context x − 1's, and complexity cells repeat every CELL_COUNT.
  for (let from = 0, to = 0; from < contexts * values; from++, to = to + 1 === cells ? 0 : to + 1) {
    pooledN[to]! += n[from]!;
    pooledS[to]! += s[from]!;
  }
}

/** What userPosterior writes: P(favourite) per context cell and P(follower) per dimension. */
export interface Beliefs {
  favourite: Float64Array;
  follower: Float64Array;
}

/**
 * Writes P(favourite) per context cell into `into.favourite` and P(follower) per dimension into
 * `into.follower`, for the user's evidence, and returns log(P(evidence | neutral) / P(evidence |
 * typed)) — 0 when the user has no typed contexts (both models are then the same). With `also`,
 * does the same into `also.into` under `also.prior`, whose models differ from `prior`'s in their
 * follower shares alone (a decision's, CompiledPopulation.choosing), for the cost of the mixtures
 * only (favouritePosterior). `scratch` is only worked in.
 */
export function userPosterior(
  prior: FavouriteModels,
  evidence: ContextEvidence,
  into: Beliefs,
  scratch: PosteriorScratch,
  also?: { prior: FavouriteModels; into: Beliefs },
): number {
  const dimensions = prior.dimensions;
  const { contexts } = evidence;
  const { favourite, follower } = into;
  if (contexts <= COMPLEXITY_COUNT) {
    for (let d = 0; d < dimensions.length; d++) {
      const second = also && { model: also.prior.dimensions[d]!, out: also.into.favourite, follower: 0 };
      follower[d] = favouritePosterior(dimensions[d]!, evidence, favourite, scratch.favourite, undefined, second);
      if (also && second) also.into.follower[d] = second.follower;
    }
    return 0;
  }
  const { pooled, neutralFavourite, neutralFollower, logEvidence } = scratch;
  const { alsoNeutralFavourite, alsoNeutralFollower, alsoLogEvidence } = scratch;
  pool(evidence, pooled);
  let logBayes = 0;
  let alsoLogBayes = 0;
  for (let d = 0; d < dimensions.length; d++) {
    const model = dimensions[d]!;
    const alsoModel = also?.prior.dimensions[d];
    const neutral = alsoModel && { model: alsoModel, out: alsoNeutralFavourite, logEvidence: alsoLogEvidence, follower: 0 };
    neutralFollower[d] = favouritePosterior(model, pooled, neutralFavourite, scratch.favourite, logEvidence, neutral);
    logBayes += logEvidence.log;
    if (neutral) {
      alsoNeutralFollower[d] = neutral.follower;
      alsoLogBayes += alsoLogEvidence.log;
    }
    const typed = also && alsoModel && { model: alsoModel, out: also.into.favourite, logEvidence: alsoLogEvidence, follower: 0 };
    follower[d] = favouritePosterior(model, evidence, favourite, scratch.favourite, logEvidence, typed);
    logBayes -= logEvidence.log;
    if (also && typed) {
      also.into.follower[d] = typed.follower;
      alsoLogBayes -= alsoLogEvidence.log;
    }
  }
  mixNeutral(prior.typeNeutralLogit + logBayes, contexts, neutralFavourite, neutralFollower, into);
  if (also) mixNeutral(also.prior.typeNeutralLogit + alsoLogBayes, contexts, alsoNeutralFavourite, alsoNeutralFollower, also.into);
  return logBayes;
}

/** Mixes the neutral model's beliefs into the typed model's (in `into`) by P(neutral) = logistic(`logit`). */
function mixNeutral(logit: number, contexts: number, neutralFavourite: Float64Array, neutralFollower: Float64Array, into: Beliefs): void {
  const { favourite, follower } = into;
  const neutral = logistic(logit);
  const typed = 1 - neutral;
  const cells = CELL_COUNT;
  const values = VALUE_COUNT;
  for (let cell = 0, at = 0; cell < contexts * values; cell++, at = at + 1 === cells ? 0 : at + 1)
    favourite[cell] = neutral * neutralFavourite[at]! + typed * favourite[cell]!;
  for (let d = 0; d < follower.length; d++) follower[d] = neutral * neutralFollower[d]! + typed * follower[d]!;
}
