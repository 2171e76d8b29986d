import { DIMENSION_NAMES, type Dimension } from '../arms';
import { complexityShares, fillUnknownContexts } from './complexity-shares';
import { favouritePosterior } from './favourite';
import {
  BELIEF_CELL_COUNT,
  CELL_COUNT,
  COMPLEXITY_COUNT,
  CONTEXT_CELL_COUNT,
  CONTEXT_COUNT,
  DIMENSION_OFFSET,
  VALUE_COUNT,
  contextIndex,
  valueCount,
} from './layout';
import type { CompiledPopulation } from './population-model';
import { userPosterior, type PosteriorScratch } from './task-types';
import { DECAY, HISTORY_LENGTH, historyLength, type EngineState } from './state';

/**
 * What the engine believes about one user (docs/adr/0009-favourite-model.md): for every value,
 * the probability that it is the user's favourite in each context (complexity × task type).
 *
 * A reward is earned by all four dimensions at once. Each dimension is credited with the reward
 * less what the other three are expected to have contributed — their step Δ times the
 * probability that the value shown was the user's favourite — and the user's posterior
 * (userPosterior in task-types.ts: the favourite model of favourite.ts, with task types pooled
 * or kept apart) is fed those credited rewards. This is mean-field inference, done over the
 * stored history with today's beliefs: SWEEPS rounds starting from the population prior. So
 * when the engine learns that a framing suits the user, earlier rewards are re-read in that
 * light, and a communication style shown during a run of wrong framings is not blamed for them.
 */
const SWEEPS = 2;

/**
 * A user's first outcome ever (`state.outcomes` is 1, not merely one entry in the history, which
 * a change-detector reset can leave) counts at this weight while it is their only one. One
 * reward says little more than whether the task was started, and the Gaussian likelihood reads
 * it about twice as strongly as it is (ADR 0009 decision 2; docs/BENCHMARKS.md, "Cold start"),
 * so alone it could move a new user off the population's favourite after a single failure. From the second outcome on, every outcome counts in full:
 * there the sharper reading finds a favourite sooner, and tempering every outcome cost reward
 * and drift recovery (ADR 0009). The weight is part of the user's evidence, so the population's
 * EM (expectation.ts) also counts such a user's first outcome at 0.45 of one.
 */
export const FIRST_OUTCOME_WEIGHT = 0.45;

const D = DIMENSION_NAMES.length;
const FRAMING_COUNT = valueCount('framing');
const OFFSETS: readonly number[] = Object.freeze(DIMENSION_NAMES.map((dim) => DIMENSION_OFFSET[dim]));

export interface Inference {
  /** Contexts in use: COMPLEXITY_COUNT × (1 + tracked task types). */
  contexts: number;
  /** P(value is the user's favourite in the cell's context), per context cell (context · VALUE_COUNT + value slot). */
  favourite: Float64Array;
  /**
   * The same followed by the unknown-complexity contexts' (BELIEF_CELL_COUNT cells; `favourite`
   * is a view of its first CONTEXT_CELL_COUNT): what decisions and credits read.
   */
  beliefs: Float64Array;
  /** The user's share of each complexity, for requests without one (complexity-shares.ts). */
  shares: Float64Array;
  /** P(the user follows the population), per dimension. */
  follower: Float64Array;
  /** log Bayes factor for the user's favourites being the same in all their task types (task-types.ts). */
  neutralLogBayes: number;
  /** Decayed evidence per context cell of a known complexity: weights and credited reward sums (history and older outcomes). */
  n: Float64Array;
  s: Float64Array;
  /** Reward credited to each dimension, per history entry: credited[entry · 4 + d]. */
  credited: Float64Array;
  /** The prior the beliefs are under, and a new user's beliefs under it (where the inference started). */
  prior: CompiledPopulation;
  start: PriorBeliefs;
  /** What a decision chooses by (choosingBeliefs), once a decision has asked. */
  choosing: Float64Array | null;
}

/** The user's decayed outcomes in context x (each is credited to all four dimensions, so the framing's evidence counts them). */
export function contextEvidence(inference: Inference, x: number): number {
  const first = x * VALUE_COUNT + DIMENSION_OFFSET.framing;
  const end = first + FRAMING_COUNT;
  let total = 0;
  for (let cell = first; cell < end; cell++) total += inference.n[cell]!;
  return total;
}

/** The value slot of dimension d's value shown in a history entry (or any outcome's `shown`). */
export const shownSlot = (shown: Record<Dimension, number>, d: number): number => OFFSETS[d]! + shown[DIMENSION_NAMES[d]!];

/**
 * The credit rule: each dimension's share of `reward` — the reward less the other three
 * dimensions' expected part (step × P(the value shown is the favourite)) — for the values shown
 * at cells[at…at + 3], written to out[outAt…outAt + 3]. Returns the four dimensions' expected
 * part together.
 */
export function creditShares({
  prior,
  favourite,
  cells,
  at,
  reward,
  out,
  outAt,
}: {
  prior: CompiledPopulation;
  favourite: Float64Array;
  cells: ArrayLike<number>;
  at: number;
  reward: number;
  out: Float64Array;
  outAt: number;
}): number {
  let total = 0;
  for (let d = 0; d < D; d++) total += prior.dimensions[d]!.step * favourite[cells[at + d]!]!;
  for (let d = 0; d < D; d++) out[outAt + d] = reward - (total - prior.dimensions[d]!.step * favourite[cells[at + d]!]!);
  return total;
}

/** inferUser's working arrays (one set per engine, scratch.ts), with userPosterior's. */
export interface InferenceScratch {
  posterior: PosteriorScratch;
  /** The history, unpacked once per inference: context cells per entry and dimension, rewards, decayed weights. */
  entryCells: Int32Array;
  entryRewards: Float64Array;
  entryWeights: Float64Array;
  /** Each dimension's step, and its expected part of the entry being credited. */
  steps: Float64Array;
  parts: Float64Array;
}

export const inferenceScratch = (posterior: PosteriorScratch): InferenceScratch => ({
  posterior,
  entryCells: new Int32Array(HISTORY_LENGTH * D),
  entryRewards: new Float64Array(HISTORY_LENGTH),
  entryWeights: new Float64Array(HISTORY_LENGTH),
  steps: new Float64Array(D),
  parts: new Float64Array(D),
});

function unpackHistory(state: EngineState, scratch: InferenceScratch): number {
  const { history } = state;
  const { entryCells, entryRewards, entryWeights } = scratch;
  const { taskComplexity, taskSlot, reward, shown } = history;
  const length = historyLength(history);
  // Module constants as locals: loops read a local as a register, an imported constant as a property.
  const dims = D;
  const values = VALUE_COUNT;
  const decay = DECAY;
  let weight = state.outcomes === 1 ? FIRST_OUTCOME_WEIGHT : 1;
  for (let e = length - 1; e >= 0; e--, weight *= decay) {
    entryRewards[e] = reward[e]!;
    entryWeights[e] = weight;
    // The entry's context first, in dimension 0's place until that dimension's turn below.
    entryCells[e * dims] = contextIndex(taskComplexity[e]!, taskSlot[e]!) * values;
  }
  // Then each dimension's value slot, one column at a time (dimension 0 last: it reads the context from its place).
  for (let d = dims - 1; d >= 0; d--) {
    const column = shown[DIMENSION_NAMES[d]!];
    const offset = OFFSETS[d]!;
    for (let e = 0, at = 0; e < length; e++, at += dims) entryCells[at + d] = entryCells[at]! + offset + column[e]!;
  }
  return length;
}

/**
 * The decayed weights of the state's history, unpacked (unpackHistory), and of its older outcomes,
 * per context cell: into `into.n`. They do not depend on the beliefs, so every sweep reads the
 * same. Older outcomes count as untyped; an outcome without complexity is split between the
 * complexities of its task-type slot by the user's shares.
 */
function weighHistory(state: EngineState, length: number, into: Inference, scratch: InferenceScratch): void {
  const { entryCells, entryWeights } = scratch;
  const { n, shares } = into;
  const older = state.older.weight;
  const dims = D;
  const cells = CELL_COUNT;
  const contextCells = CONTEXT_CELL_COUNT;
  for (let cell = 0; cell < cells; cell++) n[cell] = older[cell]!;
  n.fill(0, cells);
  for (let e = 0, at = 0; e < length; e++, at += dims) {
    const weight = entryWeights[e]!;
    for (let d = 0; d < dims; d++) {
      const cell = entryCells[at + d]!;
      if (cell < contextCells) n[cell]! += weight;
      else spreadUnknown(n, cell, weight, shares);
    }
  }
}

/**
 * Adds `amount` to the cells of an unknown-complexity context cell's value, split between the
 * complexities of its task-type slot by the user's shares: amount · share, in complexity order.
 */
function spreadUnknown(into: Float64Array, cell: number, amount: number, shares: Float64Array): void {
  const slot = Math.floor(cell / VALUE_COUNT) - CONTEXT_COUNT;
  const value = cell % VALUE_COUNT;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) into[contextIndex(c, slot) * VALUE_COUNT + value]! += amount * shares[c]!;
}

/**
 * Credited rewards of the state's history, unpacked (unpackHistory), under the beliefs
 * `favourite` (creditShares' rule, inlined: this runs for every entry in every sweep), and
 * their decayed sums per context cell with the older outcomes': into `into.credited` and
 * `into.s`. Spread as weighHistory spreads the weights.
 */
function creditHistory(state: EngineState, length: number, favourite: Float64Array, into: Inference, scratch: InferenceScratch): void {
  const { entryCells, entryRewards, entryWeights, steps, parts } = scratch;
  const { s, credited, shares } = into;
  const older = state.older.creditedRewardSum;
  const dims = D;
  const cells = CELL_COUNT;
  const contextCells = CONTEXT_CELL_COUNT;
  for (let cell = 0; cell < cells; cell++) s[cell] = older[cell]!;
  s.fill(0, cells);
  for (let e = 0, at = 0; e < length; e++, at += dims) {
    let total = 0;
    for (let d = 0; d < dims; d++) total += parts[d] = steps[d]! * favourite[entryCells[at + d]!]!;
    const reward = entryRewards[e]!;
    const weight = entryWeights[e]!;
    for (let d = 0; d < dims; d++) {
      const share = (credited[at + d] = reward - (total - parts[d]!));
      const cell = entryCells[at + d]!;
      if (cell < contextCells) s[cell]! += weight * share;
      else spreadCredit(s, cell, weight, share, shares);
    }
  }
}

/** spreadUnknown for credited rewards: weight · the complexity's share · the credited share, in that order. */
function spreadCredit(into: Float64Array, cell: number, weight: number, share: number, shares: Float64Array): void {
  const slot = Math.floor(cell / VALUE_COUNT) - CONTEXT_COUNT;
  const value = cell % VALUE_COUNT;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) into[contextIndex(c, slot) * VALUE_COUNT + value]! += weight * shares[c]! * share;
}

/** A new user's beliefs, from the prior alone: P(favourite) per context cell and P(follower) per dimension, and what a decision chooses by. */
export interface PriorBeliefs {
  favourite: Float64Array;
  follower: Float64Array;
  choosing: Float64Array;
}

/**
 * A new user's beliefs under `prior` in `contexts` contexts: the same for every user tracking as
 * many task types, so the engine keeps them per prior (engine.ts). A new object.
 */
export function priorBeliefs(prior: CompiledPopulation, contexts: number, scratch: PosteriorScratch): PriorBeliefs {
  const none = { n: new Float64Array(CONTEXT_CELL_COUNT), s: new Float64Array(CONTEXT_CELL_COUNT), contexts };
  const beliefs: PriorBeliefs = {
    favourite: new Float64Array(CONTEXT_CELL_COUNT),
    follower: new Float64Array(D),
    choosing: new Float64Array(CONTEXT_CELL_COUNT),
  };
  prior.dimensions.forEach((model, d) => (beliefs.follower[d] = favouritePosterior(model, none, beliefs.favourite, scratch.favourite)));
  userPosterior(prior.choosing, none, { favourite: beliefs.choosing, follower: new Float64Array(D) }, scratch);
  return beliefs;
}

/**
 * The beliefs about a user under `prior`, starting from a new user's (`start`, priorBeliefs for
 * the user's contexts): a new object, which nothing changes afterwards (but for its `choosing`,
 * filled once). The engine keeps it per state object (engine.ts). With `forDecision`, what a
 * decision chooses by (choosingBeliefs) is filled too, with the last sweep's likelihoods.
 */
export function inferUser(
  state: EngineState,
  prior: CompiledPopulation,
  start: PriorBeliefs,
  scratch: InferenceScratch,
  forDecision = false,
): Inference {
  const contexts = COMPLEXITY_COUNT * (1 + state.taskTypes.length);
  const length = historyLength(state.history);
  const choosing = forDecision && prior.choosing.dimensions !== prior.dimensions;
  // One buffer for all of the inference's arrays: a typed array's own buffer costs more than its cells.
  const buffer = new Float64Array((choosing ? 2 : 1) * BELIEF_CELL_COUNT + 2 * CONTEXT_CELL_COUNT + length * D + COMPLEXITY_COUNT + D);
  let used = 0;
  const take = (size: number): Float64Array => buffer.subarray(used, (used += size));
  const all = take(BELIEF_CELL_COUNT);
  const result: Inference = {
    contexts,
    favourite: all.subarray(0, CONTEXT_CELL_COUNT),
    beliefs: all,
    shares: complexityShares(state, take(COMPLEXITY_COUNT)),
    follower: take(D),
    neutralLogBayes: 0,
    n: take(CONTEXT_CELL_COUNT),
    s: take(CONTEXT_CELL_COUNT),
    credited: take(length * D),
    prior,
    start,
    choosing: choosing ? take(BELIEF_CELL_COUNT) : null,
  };
  result.follower.set(start.follower);
  result.favourite.set(start.favourite);
  fillUnknownContexts(result.beliefs, result.shares, contexts);
  unpackHistory(state, scratch);
  weighHistory(state, length, result, scratch);
  for (let d = 0; d < D; d++) scratch.steps[d] = prior.dimensions[d]!.step;
  // Without a history the credits do not depend on the beliefs: one sweep gives the result.
  const sweeps = length > 0 ? SWEEPS : 1;
  for (let sweep = 0; sweep < sweeps; sweep++) {
    // A sweep credits the history with the previous sweep's beliefs, then replaces them.
    creditHistory(state, length, result.beliefs, result, scratch);
    // The last sweep's evidence is the inference's: a decision's beliefs are computed from its likelihoods too.
    const also = sweep === sweeps - 1 && result.choosing && hasEvidence(result) ? choosingInto(prior, result.choosing) : undefined;
    // The inference holds the evidence (n, s, contexts) and receives the beliefs (favourite, follower).
    result.neutralLogBayes = userPosterior(prior, result, result, scratch.posterior, also);
    fillUnknownContexts(result.beliefs, result.shares, contexts);
  }
  if (result.choosing) {
    if (!hasEvidence(result)) result.choosing.set(start.choosing);
    fillUnknownContexts(result.choosing, result.shares, contexts);
  }
  return result;
}

/** Where userPosterior writes a decision's beliefs: the first cells of `all` (the follower shares are not kept). */
const choosingInto = (prior: CompiledPopulation, all: Float64Array) => ({
  prior: prior.choosing,
  into: { favourite: all.subarray(0, CONTEXT_CELL_COUNT), follower: new Float64Array(D) },
});

/** Whether the inference holds any evidence (a new user's holds none). */
function hasEvidence({ n, s, contexts }: Inference): boolean {
  for (let cell = 0; cell < contexts * VALUE_COUNT; cell++) if (n[cell] !== 0 || s[cell] !== 0) return true;
  return false;
}

/**
 * What a decision chooses by: P(favourite) from the user's evidence under the follower shares of
 * `prior.choosing` (for a user without evidence, the tenant's once) — the beliefs themselves
 * where those shares are the learned ones. Computed once per inference and kept with it; the
 * caller may keep the result, which nothing changes.
 */
export function choosingBeliefs(inference: Inference, scratch: PosteriorScratch): Float64Array {
  const { prior } = inference;
  if (prior.choosing.dimensions === prior.dimensions) return inference.beliefs;
  if (inference.choosing) return inference.choosing;
  const all = new Float64Array(BELIEF_CELL_COUNT);
  const favourite = all.subarray(0, CONTEXT_CELL_COUNT);
  if (hasEvidence(inference)) userPosterior(prior.choosing, inference, { favourite, follower: new Float64Array(D) }, scratch);
  else favourite.set(inference.start.choosing);
  fillUnknownContexts(all, inference.shares, inference.contexts);
  inference.choosing = all;
  return all;
}
