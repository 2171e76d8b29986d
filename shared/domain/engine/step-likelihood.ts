import { DIMENSION_NAMES } from '../arms';
import { favouritePosterior, type DimensionModel } from './favourite';
import { CELL_COUNT, COMPLEXITY_COUNT, VALUE_COUNT, argmax, contextComplexity } from './layout';

/**
 * Each dimension's step Δ (how much more a favourite earns than another value) by maximum
 * likelihood over a grid of candidate steps (docs/adr/0009-favourite-model.md, decision 3).
 *
 * For every outcome the worker asks, at each candidate Δ: how probable was the reward credited
 * to this dimension, predicted from the user's evidence before it (the favourite model with that
 * Δ)? The population prior keeps the sum of those log predictive densities per candidate, and
 * the tenant's step is the maximum (refined by a parabola). A step that is too small leaves a
 * user's posterior flat and predicts every value alike; one too large is overconfident; the
 * right one predicts best. Unlike the levels' EM, which averages users' posteriors that a small
 * step has already flattened (and so stays small where a dimension's favourites are each user's
 * own), the predictive likelihood rewards the step for what it lets a user's history tell.
 */

/** Candidate steps, roughly logarithmic from "does not matter" to "as much as a framing can". */
export const STEP_GRID = [0.005, 0.01, 0.02, 0.035, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.45, 0.65];
const LOG_GRID = STEP_GRID.map(Math.log);
/** A log-normal prior on Δ around the dimension's default step, sd 1/√STEP_PRIOR in log Δ: it decides while a tenant is young. */
const STEP_PRIOR = 2;

/** What a candidate step makes of a dimension: the favourite model and the levels' noise. */
export interface StepCandidate {
  model: DimensionModel;
  /** Non-favourite level per complexity (offset included) and the noise variance. */
  low: Float64Array;
  noise: number;
}

/**
 * The dimension's model with step `step`, keeping the mean of its two levels (`levelMean`, the
 * favourite level weighted by the share of outcomes at a favourite) and the credited reward's
 * total variance: the noise is what the levels do not explain.
 */
export function candidateModel(
  base: DimensionModel,
  {
    step,
    levelMean,
    share,
    variance,
    offsets,
    minNoise,
  }: {
    step: number;
    levelMean: number;
    share: number;
    variance: number;
    offsets: Float64Array;
    minNoise: number;
  },
): StepCandidate {
  const other = levelMean - share * step;
  const noise = Math.max(minNoise, variance - step * step * share * (1 - share));
  return {
    model: { ...base, step, mid: Float64Array.from(offsets, (o) => other + o + step / 2), weight: step / noise },
    low: Float64Array.from(offsets, (o) => other + o),
    noise,
  };
}

const pooledN = new Float64Array(CELL_COUNT);
const pooledS = new Float64Array(CELL_COUNT);
const posterior = new Float64Array(CELL_COUNT);

/**
 * log predictive density, at each candidate step of each dimension, of the credited rewards
 * `credited` of an outcome at complexity `c` (a known one) showing the values in `slots`,
 * given the user's evidence n, s before it over `contexts` contexts (pooled by complexity);
 * written to out[d · STEP_GRID.length + j], less each dimension's largest (so the sums stay small).
 */
export function stepLogDensities(
  candidates: ReadonlyArray<readonly StepCandidate[]>,
  evidence: { n: ArrayLike<number>; s: ArrayLike<number>; contexts: number },
  outcome: { c: number; slots: ArrayLike<number>; credited: ArrayLike<number> },
  out: Float64Array,
): void {
  pooledN.fill(0);
  pooledS.fill(0);
  for (let x = 0; x < evidence.contexts; x++) {
    const from = x * VALUE_COUNT;
    const to = contextComplexity(x) * VALUE_COUNT;
    for (let slot = 0; slot < VALUE_COUNT; slot++) {
      pooledN[to + slot]! += evidence.n[from + slot]!;
      pooledS[to + slot]! += evidence.s[from + slot]!;
    }
  }
  const G = STEP_GRID.length;
  for (let d = 0; d < DIMENSION_NAMES.length; d++) {
    const cell = outcome.c * VALUE_COUNT + outcome.slots[d]!;
    const r = outcome.credited[d]!;
    let max = -Infinity;
    for (let j = 0; j < G; j++) {
      const { model, low, noise } = candidates[d]![j]!;
      favouritePosterior(model, pooledN, pooledS, COMPLEXITY_COUNT, posterior);
      const p = Math.min(1, Math.max(0, posterior[cell]!));
      const lo = low[outcome.c]!;
      const atLow = Math.exp(-((r - lo) ** 2) / (2 * noise));
      const atHigh = Math.exp(-((r - lo - model.step) ** 2) / (2 * noise));
      const density = Math.log(Math.max(1e-300, p * atHigh + (1 - p) * atLow)) - 0.5 * Math.log(noise);
      out[d * G + j] = density;
      if (density > max) max = density;
    }
    for (let j = 0; j < G; j++) out[d * G + j]! -= max;
  }
}

/** The maximum-likelihood step of dimension d from the prior's sums, with a weak pull toward `fallback`. */
export function likelihoodStep(loglik: ArrayLike<number>, d: number, fallback: number): number {
  const G = STEP_GRID.length;
  const centre = Math.log(fallback);
  const score = LOG_GRID.map((log, j) => loglik[d * G + j]! - 0.5 * STEP_PRIOR * (log - centre) ** 2);
  const best = argmax(score, 0, G);
  let index = best;
  if (best > 0 && best < G - 1) {
    const [left, mid, right] = [score[best - 1]!, score[best]!, score[best + 1]!];
    const curvature = left - 2 * mid + right;
    if (curvature < 0) index += (0.5 * (left - right)) / curvature;
  }
  const lower = Math.floor(index);
  const t = index - lower;
  const upper = Math.min(G - 1, lower + 1);
  return Math.exp(LOG_GRID[lower]! * (1 - t) + LOG_GRID[upper]! * t);
}

/** The sums' log-likelihood of dimension d at any step, interpolated linearly in log Δ between grid points (clamped to the grid). */
export function stepLogLikelihoodAt(loglik: ArrayLike<number>, d: number, step: number): number {
  const G = STEP_GRID.length;
  const log = Math.min(LOG_GRID[G - 1]!, Math.max(LOG_GRID[0]!, Math.log(step)));
  let j = 0;
  while (j < G - 2 && LOG_GRID[j + 1]! < log) j++;
  const t = (log - LOG_GRID[j]!) / (LOG_GRID[j + 1]! - LOG_GRID[j]!);
  return loglik[d * G + j]! * (1 - t) + loglik[d * G + j + 1]! * t;
}
