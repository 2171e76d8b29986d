import { DIMENSIONS, type Choice, type Dimension, type ProfilePhase } from '../arms';
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

/** The summary of `state`, whose beliefs are `inference`. */
export function computeSummary(state: EngineState, inference: Inference): Summary {
  // Weigh contexts by how much of the user's evidence they hold (the untyped ones a little more, so that a user without evidence gets the prior's).
  const weight = Float64Array.from(
    { length: inference.contexts },
    (_, x) => contextEvidence(inference, x) + (x < COMPLEXITY_COUNT ? UNTYPED_CONTEXT_WEIGHT : 0),
  );
  /** The index of dimension `dim`'s value with the most weighted P(favourite) over the contexts (the first on a tie). */
  const top = (dim: Dimension): number => {
    let best = 0;
    let bestScore = -Infinity;
    for (let v = 0; v < valueCount(dim); v++) {
      let score = 0;
      for (let x = 0; x < inference.contexts; x++) score += weight[x]! * inference.favourite[x * VALUE_COUNT + DIMENSION_OFFSET[dim] + v]!;
      if (score > bestScore) {
        best = v;
        bestScore = score;
      }
    }
    return best;
  };
  const best: Choice = {
    framing: DIMENSIONS.framing.values[top('framing')]!,
    style: DIMENSIONS.style.values[top('style')]!,
    complexityHandling: DIMENSIONS.complexityHandling.values[top('complexityHandling')]!,
    encouragement: DIMENSIONS.encouragement.values[top('encouragement')]!,
  };
  let phase: ProfilePhase = state.outcomes === 0 ? 'cold_start' : 'learning';
  if (state.outcomes >= ESTABLISHED_MIN_OUTCOMES) {
    const main = argmax(weight, 0, inference.contexts);
    const first = main * VALUE_COUNT + DIMENSION_OFFSET.framing;
    const framing = inference.favourite[first + argmax(inference.favourite, first, valueCount('framing'))]!;
    if (framing >= ESTABLISHED_MIN_PROBABILITY) phase = 'established';
  }
  return { best, phase };
}
