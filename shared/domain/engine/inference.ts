import { DIMENSION_NAMES } from '../arms';
import { favouritePosterior } from './favourite';
import { COMPLEXITY_COUNT, CONTEXT_CELL_COUNT, DIMENSION_OFFSET, VALUE_COUNT, cellIndex, contextIndex } from './layout';
import type { CompiledPopulation } from './population';
import { DECAY, ENTRY_COMPLEXITY, ENTRY_REWARD, ENTRY_TASK_SLOT, entryValue, type EngineState, type Entry } from './state';

/**
 * What the engine believes about one user (docs/adr/0009-favourite-model.md): for every value,
 * the probability that it is the user's favourite in each context (complexity × task type).
 *
 * A reward is earned by all four dimensions at once. Each dimension is credited with the reward
 * less what the other three are expected to have contributed — their step Δ times the
 * probability that the value shown was the user's favourite — and its favourite model
 * (favourite.ts) is fed those credited rewards. This is mean-field inference, done over the
 * stored history with today's beliefs: SWEEPS rounds starting from the population prior. So
 * when the engine learns that a framing suits the user, earlier rewards are re-read in that
 * light, and a communication style shown during a run of wrong framings is not blamed for them.
 */
export const SWEEPS = 2;

const D = DIMENSION_NAMES.length;
const OFFSETS = DIMENSION_NAMES.map((dim) => DIMENSION_OFFSET[dim]);

export interface Inference {
  /** Contexts in use: COMPLEXITY_COUNT × (1 + tracked task types). */
  contexts: number;
  /** P(value is the user's favourite in the cell's context), per context cell (context · VALUE_COUNT + value slot). */
  favourite: Float64Array;
  /** P(the user follows the population), per dimension. */
  follower: Float64Array;
  /** Decayed evidence per context cell: weights and credited reward sums (history and older outcomes). */
  n: Float64Array;
  s: Float64Array;
  /** Reward credited to each dimension, per history entry: credited[entry · 4 + d]. */
  credited: Float64Array;
}

/** The cell of dimension d's value in an entry, by complexity only (the population's and the rationale's layout). */
export const entryCell = (entry: Entry, d: number): number => cellIndex(entry[ENTRY_COMPLEXITY], OFFSETS[d]! + entry[entryValue(d)]!);

/** The context cell of dimension d's value in an entry. */
export const entryContextCell = (entry: Entry, d: number): number =>
  contextIndex(entry[ENTRY_COMPLEXITY], entry[ENTRY_TASK_SLOT]) * VALUE_COUNT + OFFSETS[d]! + entry[entryValue(d)]!;

const cache = new WeakMap<EngineState, { prior: CompiledPopulation; result: Inference }>();
const contribution = new Float64Array(D);
const cellsOf = new Int32Array(D);

/** Credited rewards and evidence under the beliefs `favourite`; writes into `into`. Older outcomes count as untyped. */
function creditHistory(state: EngineState, prior: CompiledPopulation, favourite: Float64Array, into: Inference): void {
  into.n.fill(0);
  into.s.fill(0);
  into.n.set(state.older.n);
  into.s.set(state.older.s);
  let weight = 1;
  for (let e = state.history.length - 1; e >= 0; e--) {
    const entry = state.history[e]!;
    let total = 0;
    for (let d = 0; d < D; d++) {
      const cell = entryContextCell(entry, d);
      cellsOf[d] = cell;
      contribution[d] = prior.dimensions[d]!.step * favourite[cell]!;
      total += contribution[d]!;
    }
    for (let d = 0; d < D; d++) {
      const credited = entry[ENTRY_REWARD] - (total - contribution[d]!);
      into.credited[e * D + d] = credited;
      into.n[cellsOf[d]!]! += weight;
      into.s[cellsOf[d]!]! += weight * credited;
    }
    weight *= DECAY;
  }
}

/** The beliefs about a user (cached per state object and prior). */
export function inferUser(state: EngineState, prior: CompiledPopulation): Inference {
  const hit = cache.get(state);
  if (hit && hit.prior === prior) return hit.result;
  const contexts = COMPLEXITY_COUNT * (1 + state.taskTypes.length);
  const result: Inference = {
    contexts,
    favourite: new Float64Array(CONTEXT_CELL_COUNT),
    follower: new Float64Array(D),
    n: new Float64Array(CONTEXT_CELL_COUNT),
    s: new Float64Array(CONTEXT_CELL_COUNT),
    credited: new Float64Array(state.history.length * D),
  };
  // Start from the population prior alone.
  for (let d = 0; d < D; d++) result.follower[d] = favouritePosterior(prior.dimensions[d]!, result.n, result.s, contexts, result.favourite);
  const beliefs = new Float64Array(CONTEXT_CELL_COUNT);
  for (let sweep = 0; sweep < SWEEPS; sweep++) {
    beliefs.set(result.favourite);
    creditHistory(state, prior, beliefs, result);
    for (let d = 0; d < D; d++)
      result.follower[d] = favouritePosterior(prior.dimensions[d]!, result.n, result.s, contexts, result.favourite);
  }
  cache.set(state, { prior, result });
  return result;
}
