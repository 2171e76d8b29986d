import { DIMENSIONS, DIMENSION_NAMES, type Choice, type Dimension, type ProfilePhase } from '../arms';
import { contextEvidence, type Inference } from './inference';
import { COMPLEXITY_COUNT, DIMENSION_OFFSET, VALUE_COUNT, argmax, valueCount } from './layout';
import type { EngineState, Summary } from './state';

/**
 * The summary stored with a user's state (ADR 0009 decision 4): their best value per dimension
 * over their contexts, and their profile phase. Profiles and context responses both read it,
 * so they show the same phase.
 */

/** Phase rule: `established` once the user has this many outcomes… */
export const ESTABLISHED_MIN_OUTCOMES = 10;
/** …and, in the context (complexity × task type) holding most of the user's evidence, one framing is the favourite with at least this probability. */
const ESTABLISHED_MIN_PROBABILITY = 0.8;
/** Evidence added to each untyped context when summarising a profile: decides only for a user with (next to) none. */
const UNTYPED_CONTEXT_WEIGHT = 0.1;

/** The index of the value, of the `count` from value slot `offset`, with the most P(favourite) weighted by `weight` over the contexts (the first on a tie). */
function top(inference: Inference, weight: readonly number[], offset: number, count: number): number {
  let best = 0;
  let bestScore = -Infinity;
  for (let v = 0; v < count; v++) {
    let score = 0;
    for (let x = 0; x < inference.contexts; x++) score += weight[x]! * inference.favourite[x * VALUE_COUNT + offset + v]!;
    if (score > bestScore) {
      best = v;
      bestScore = score;
    }
  }
  return best;
}

/** The summary of `state`, whose beliefs are `inference`. */
export function computeSummary(state: EngineState, inference: Inference): Summary {
  // Weigh contexts by how much of the user's evidence they hold (the untyped ones a little more, so that a user without evidence gets the prior's).
  // A plain array: a typed array this small would cost more to allocate (outside the heap) than to fill.
  const weight: number[] = [];
  for (let x = 0; x < inference.contexts; x++)
    weight[x] = contextEvidence(inference, x) + (x < COMPLEXITY_COUNT ? UNTYPED_CONTEXT_WEIGHT : 0);
  const best = {} as Record<Dimension, string>;
  for (const dim of DIMENSION_NAMES) best[dim] = DIMENSIONS[dim].values[top(inference, weight, DIMENSION_OFFSET[dim], valueCount(dim))]!;
  let phase: ProfilePhase = state.outcomes === 0 ? 'cold_start' : 'learning';
  if (state.outcomes >= ESTABLISHED_MIN_OUTCOMES) {
    const main = argmax(weight, 0, inference.contexts);
    const first = main * VALUE_COUNT + DIMENSION_OFFSET.framing;
    const framing = inference.favourite[first + argmax(inference.favourite, first, valueCount('framing'))]!;
    if (framing >= ESTABLISHED_MIN_PROBABILITY) phase = 'established';
  }
  return { best: best as Choice, phase };
}
