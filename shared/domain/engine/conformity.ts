import { DIMENSION_NAMES } from '../arms';
import type { EngineState } from './evidence';
import { COMPLEXITY_COUNT, DIMENSION_OFFSET, cellIndex, valueCount } from './layout';
import type { CompiledPrior, UserCellTotals } from './population';

/**
 * How much this user follows the population, per dimension. Some users like what most users
 * like, others do not — and a user who turned down the population's favourite at one
 * complexity is likely to turn it down at another, even though the favourites differ. So the
 * population's preferences enter each user's prior scaled by a conformity γ ~ N(1, CONFORMITY_SD²):
 *
 *   prior mean(c, a) = m_c + γ · (μ_pop(c, a) − m_c)      (m_c: the dimension's mean at c)
 *
 * γ's posterior comes from a one-dimensional regression of the user's average reward per
 * (complexity, value) on the population's advantage of that value, each cell weighted by its
 * precision; its uncertainty is added to the prior variance.
 */
export const CONFORMITY_SD = 0.8;

/** γ is kept in [0, MAX_CONFORMITY]. */
const MAX_CONFORMITY = 1.5;

/** The prior as this user sees it; `sums` are the user's evidence totals (evidence.totals). */
export function personalize(state: EngineState, prior: CompiledPrior, sums: UserCellTotals): CompiledPrior {
  if (state.outcomes === 0) return prior;
  const { n, s } = sums;
  const mean = Float64Array.from(prior.mean);
  const meanVar = Float64Array.from(prior.meanVar);
  for (const dim of DIMENSION_NAMES) {
    const first = DIMENSION_OFFSET[dim];
    const k = valueCount(dim);
    const center = new Float64Array(COMPLEXITY_COUNT);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      for (let i = 0; i < k; i++) center[c]! += prior.mean[cellIndex(c, first + i)]! / k;
    }
    let precision = 1 / (CONFORMITY_SD * CONFORMITY_SD);
    let weighted = precision; // prior mean 1
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      for (let i = 0; i < k; i++) {
        const cell = cellIndex(c, first + i);
        const count = n[cell]!;
        if (count < 0.5) continue;
        const x = prior.mean[cell]! - center[c]!;
        const v = prior.noise[cell]! / count + prior.userVar[cell]! + prior.contextVar[cell]!;
        precision += (x * x) / v;
        weighted += (x * (s[cell]! / count - center[c]!)) / v;
      }
    }
    // Never below 0: a user is at most indifferent to the population, not its opposite.
    const gamma = Math.min(MAX_CONFORMITY, Math.max(0, weighted / precision));
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      for (let i = 0; i < k; i++) {
        const cell = cellIndex(c, first + i);
        const x = prior.mean[cell]! - center[c]!;
        mean[cell] = center[c]! + gamma * x;
        meanVar[cell] = prior.meanVar[cell]! + (x * x) / precision;
      }
    }
  }
  return { ...prior, mean, meanVar };
}
