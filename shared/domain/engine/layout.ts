import { DIMENSIONS, DIMENSION_NAMES, TASK_COMPLEXITY, type Choice, type Dimension, type TaskComplexity } from '../arms';

/**
 * Flat layout of the engine's evidence arrays: every value of every dimension has one slot
 * (framing 0–4, style 5–8, complexity handling 9–11, encouragement 12–14), repeated per task
 * complexity: cell index = complexity · VALUE_COUNT + value slot.
 */
export const DIMENSION_OFFSET: Readonly<Record<Dimension, number>> = Object.freeze(
  Object.fromEntries(
    DIMENSION_NAMES.map((dim, d) => [dim, DIMENSION_NAMES.slice(0, d).reduce((sum, before) => sum + DIMENSIONS[before].values.length, 0)]),
  ) as Record<Dimension, number>,
);
export const VALUE_COUNT = DIMENSION_NAMES.reduce((sum, dim) => sum + DIMENSIONS[dim].values.length, 0);
/** The most values any dimension has (the size of per-value scratch buffers). */
export const MAX_VALUE_COUNT = Math.max(...Object.values(DIMENSIONS).map((d) => d.values.length));
export const COMPLEXITY_COUNT = TASK_COMPLEXITY.length;
export const CELL_COUNT = COMPLEXITY_COUNT * VALUE_COUNT;
/** The complexity index of a request that gave none (complexity-shares.ts). */
export const UNKNOWN_COMPLEXITY = COMPLEXITY_COUNT;

/**
 * A user's contexts: complexity × task-type slot (0 for no task type, 1…TASK_SLOTS − 1 for the
 * tracked ones). Context cells repeat the value slots per context. After them come the
 * contexts of an unknown complexity, one per task-type slot, whose beliefs are derived from the
 * others' (BELIEF_CELL_COUNT cells in all).
 */
export const TASK_SLOTS = 4;
export const CONTEXT_COUNT = COMPLEXITY_COUNT * TASK_SLOTS;
export const CONTEXT_CELL_COUNT = CONTEXT_COUNT * VALUE_COUNT;
export const BELIEF_CELL_COUNT = (CONTEXT_COUNT + TASK_SLOTS) * VALUE_COUNT;
export const contextIndex = (complexity: number, taskSlot: number): number =>
  complexity === UNKNOWN_COMPLEXITY ? CONTEXT_COUNT + taskSlot : taskSlot * COMPLEXITY_COUNT + complexity;
export const contextComplexity = (context: number): number => context % COMPLEXITY_COUNT;

export const valueCount = (dim: Dimension): number => DIMENSIONS[dim].values.length;
/** A request's complexity index; UNKNOWN_COMPLEXITY when it gave none. */
export const complexityIndex = (complexity: TaskComplexity | undefined): number =>
  complexity === undefined ? UNKNOWN_COMPLEXITY : TASK_COMPLEXITY.indexOf(complexity);
export const cellIndex = (complexity: number, slot: number): number => complexity * VALUE_COUNT + slot;

/** A value's index in its dimension's value set (-1 for a value outside the set). */
const valueIndex = (dim: Dimension, value: string): number => (DIMENSIONS[dim].values as readonly string[]).indexOf(value);

/** A chosen or pinned value's index; choices reach the engine validated, so a value outside the set is a bug, not data. */
export function choiceIndex(dim: Dimension, value: string): number {
  const index = valueIndex(dim, value);
  if (index < 0) throw new Error(`engine: ${value} is not a ${dim} value`);
  return index;
}

/** The value slot of each dimension's value in a choice (-1 for a value outside the set). */
export function choiceSlots(choice: Choice): Record<Dimension, number> {
  const slots = {} as Record<Dimension, number>;
  for (const dim of DIMENSION_NAMES) {
    const index = valueIndex(dim, choice[dim]);
    slots[dim] = index < 0 ? -1 : DIMENSION_OFFSET[dim] + index;
  }
  return slots;
}

/** The index v in 0…count − 1 whose values[first + v] is largest (the lowest such v on a tie). */
export function argmax(values: ArrayLike<number>, first: number, count: number): number {
  let best = 0;
  for (let v = 1; v < count; v++) if (values[first + v]! > values[first + best]!) best = v;
  return best;
}

export const zeros = (n: number): number[] => new Array<number>(n).fill(0);

/** Rounds evidence so a state survives a JSON round trip unchanged and stays small. */
export const round4 = (x: number): number => Math.round(x * 1e4) / 1e4;

/**
 * Rounds to 7 significant digits: for sums that decay by a factor close to 1 (the population's,
 * 0.9998 per outcome), whose fixed-decimal rounding would stop a small sum from ever decaying
 * (x · 0.0002 < 0.00005 for every x < 0.25) and make the result depend on how outcomes were batched.
 */
export const roundSignificant = (x: number): number => (x === 0 ? 0 : Number(x.toPrecision(7)));
