import { argmax } from './layout';

/**
 * The tenant's share of task-type-neutral users (ADR 0009 decision 7), learned by maximum
 * likelihood over a grid of candidate shares: the population prior keeps, at each, Σ t ·
 * log(share · B + 1 − share) over outcomes of users with typed evidence (B the user's Bayes
 * factor for being neutral, t the weight of their typed evidence).
 */

/**
 * Candidate shares of task-type-neutral users: logit −4…4 in steps of 0.5 (0.018…0.982), so a
 * user's own evidence always decides. The tenant's share is the maximum-likelihood point
 * (neutralLogit, as a logit): a user with little typed evidence has a Bayes factor near 1 and adds nearly
 * nothing, where an EM average of posteriors would hold the share where it started.
 */
const NEUTRAL_LOGIT_STEP = 0.5;
const NEUTRAL_LOGITS: readonly number[] = Object.freeze(Array.from({ length: 17 }, (_, g) => (g - 8) * NEUTRAL_LOGIT_STEP));
export const logistic = (logit: number): number => 1 / (1 + Math.exp(-logit));
export const NEUTRAL_GRID: readonly number[] = Object.freeze(NEUTRAL_LOGITS.map(logistic));
/** Weight of a Beta(2, 2)-like pull toward 1/2, which decides while there is no typed evidence. */
const NEUTRAL_PRIOR = 1;

/** log(share) and log(1 − share) at each point of NEUTRAL_GRID. */
const NEUTRAL_LOG_SHARE: readonly number[] = Object.freeze(NEUTRAL_GRID.map((share) => Math.log(share)));
const NEUTRAL_LOG_REST: readonly number[] = Object.freeze(NEUTRAL_GRID.map((share) => Math.log(1 - share)));

/** The logit of the maximum-likelihood share over NEUTRAL_GRID (refined by a parabola through its neighbours). */
export function neutralLogit(loglik: readonly number[]): number {
  const score = NEUTRAL_GRID.map((_, g) => loglik[g]! + NEUTRAL_PRIOR * (NEUTRAL_LOG_SHARE[g]! + NEUTRAL_LOG_REST[g]!));
  const best = argmax(score, 0, score.length);
  let logit = NEUTRAL_LOGITS[best]!;
  if (best > 0 && best < score.length - 1) {
    const [left, mid, right] = [score[best - 1]!, score[best]!, score[best + 1]!];
    const curvature = left - 2 * mid + right;
    if (curvature < 0) logit += (0.5 * NEUTRAL_LOGIT_STEP * (left - right)) / curvature;
  }
  return logit;
}

/** The maximum-likelihood share over NEUTRAL_GRID. */
export const neutralShare = (loglik: readonly number[]): number => logistic(neutralLogit(loglik));
/** Adds one outcome of a user with typed evidence `weight` and log Bayes factor `logBayes` to the grid's log-likelihoods. */
export function addNeutralEvidence(loglik: number[], weight: number, logBayes: number): void {
  NEUTRAL_GRID.forEach((_, g) => {
    // log(share · e^b + 1 − share), without overflow
    const a = NEUTRAL_LOG_SHARE[g]! + logBayes;
    const b = NEUTRAL_LOG_REST[g]!;
    loglik[g]! += weight * (Math.max(a, b) + Math.log1p(Math.exp(-Math.abs(a - b))));
  });
}
