import { COMPLEXITY_COUNT, DIMENSION_OFFSET, UNKNOWN_COMPLEXITY, VALUE_COUNT, cellIndex, contextIndex, valueCount } from './layout';
import type { CompiledPopulation } from './population-model';
import { DECAY, historyLength, type EngineState } from './state';

/**
 * Requests without a task complexity (docs/adr/0009-favourite-model.md, decision 8). Such a task
 * is at one of the three complexities, which one is not known: the engine takes it to be at
 * complexity c with the share of the user's decayed outcomes of known complexity that were at c,
 * each complexity starting from SHARE_PRIOR pseudo-outcomes (so a new user, or one who never
 * sends a complexity, is spread evenly).
 *
 * - Deciding: P(v is the favourite) in an unknown-complexity context is the shares' mix of the
 *   user's P(v is the favourite) at the three complexities, in the same task-type slot — the
 *   user's context-free beliefs (fillUnknownContexts).
 * - Learning: the outcome's evidence is split between the three complexities by the same shares
 *   (a soft assignment, as in EM): in the user's inference, in the older sums when it leaves the
 *   history, and in the population's sums.
 *
 * States without such outcomes, and decisions at a known complexity for them, are computed
 * exactly as before.
 */

/** Pseudo-outcomes each complexity starts with in a user's shares. */
export const SHARE_PRIOR = 1;

/** The shares of an outcome whose complexity is known: all of it at that complexity (constants, read-only by type). */
export const ONE_HOT: ReadonlyArray<readonly number[]> = Object.freeze(
  Array.from({ length: COMPLEXITY_COUNT }, (_, c) => Object.freeze(Array.from({ length: COMPLEXITY_COUNT }, (_, i) => (i === c ? 1 : 0)))),
);

/** The user's share of each complexity, from their evidence of known complexity (older sums and history): into `shares` (a new array without it). */
export function complexityShares(state: EngineState, shares: Float64Array = new Float64Array(COMPLEXITY_COUNT)): Float64Array {
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    // Every outcome counts once among the framings' cells.
    let weight = SHARE_PRIOR;
    for (let v = 0; v < valueCount('framing'); v++) weight += state.older.weight[cellIndex(c, DIMENSION_OFFSET.framing + v)]!;
    shares[c] = weight;
  }
  let weight = 1;
  for (let e = historyLength(state.history) - 1; e >= 0; e--, weight *= DECAY) {
    const c = state.history.taskComplexity[e]!;
    if (c !== UNKNOWN_COMPLEXITY) shares[c]! += weight;
  }
  let total = 0;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) total += shares[c]!;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) shares[c]! /= total;
  return shares;
}

/** How an outcome at complexity index c is spread over the complexities: one-hot, or the user's shares when unknown. */
export function spreadOf(c: number, shares: Float64Array | undefined): ArrayLike<number> {
  if (c !== UNKNOWN_COMPLEXITY) return ONE_HOT[c]!;
  if (!shares) throw new Error('engine: an outcome without complexity needs the user’s complexity shares');
  return shares;
}

/**
 * Writes the unknown-complexity contexts' P(favourite) — the shares' mix of the known
 * complexities' in the same task-type slot — for the `contexts` contexts in use.
 */
export function fillUnknownContexts(favourite: Float64Array, shares: Float64Array, contexts: number): void {
  const values = VALUE_COUNT;
  const complexities = COMPLEXITY_COUNT;
  for (let slot = 0; slot < contexts / complexities; slot++) {
    const to = contextIndex(UNKNOWN_COMPLEXITY, slot) * values;
    // A slot's contexts are at slot · COMPLEXITY_COUNT + c (layout.ts).
    const from = slot * complexities * values;
    for (let value = 0; value < values; value++) {
      let p = 0;
      for (let c = 0; c < complexities; c++) p += shares[c]! * favourite[from + c * values + value]!;
      favourite[to + value] = p;
    }
  }
}

/** The population's reward offset at complexity index c; for an unknown complexity, the shares' mix. */
export function complexityOffset(prior: CompiledPopulation, c: number, shares: Float64Array): number {
  if (c !== UNKNOWN_COMPLEXITY) return prior.offsets[c]!;
  let offset = 0;
  for (let k = 0; k < COMPLEXITY_COUNT; k++) offset += shares[k]! * prior.offsets[k]!;
  return offset;
}

/**
 * The population's credited-reward means per value slot (cells of complexity 0) for a request
 * without complexity: each complexity's means weighted by its share of the population's
 * outcomes (evenly while it has none).
 */
export function mixedMeans(prior: CompiledPopulation): Float64Array {
  let total = 0;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) total += prior.outcomes[c]! + SHARE_PRIOR;
  const means = new Float64Array(VALUE_COUNT);
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    const share = (prior.outcomes[c]! + SHARE_PRIOR) / total;
    for (let slot = 0; slot < VALUE_COUNT; slot++) means[slot]! += share * prior.mean[cellIndex(c, slot)]!;
  }
  return means;
}
