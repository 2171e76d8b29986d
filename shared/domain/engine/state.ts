import { z } from 'zod';
import { DIMENSIONS, DIMENSION_NAMES, choiceSchema, profilePhaseSchema, type Dimension } from '../arms';
import { CELL_COUNT, COMPLEXITY_COUNT, TASK_SLOTS, UNKNOWN_COMPLEXITY, cellIndex, round4, zeros } from './layout';

/**
 * One user's learner state (docs/adr/0009-favourite-model.md): the most recent outcomes one by
 * one — so that every decision can re-assign each reward among the four dimensions with what is
 * known now — and the older ones folded into decayed sums per (complexity, value).
 *
 * An outcome of age a (0 = the latest) counts DECAY^a. The history holds at most
 * HISTORY_LENGTH outcomes (their weights sum to 86% of all the evidence a long-time user has);
 * an outcome leaving it is added to `older` with its weight at that point, and `older` decays
 * by DECAY with every outcome.
 */
export const HISTORY_LENGTH = 64;
/** Per-outcome decay of a user's evidence: an outcome 23 outcomes old counts half. */
export const DECAY = 0.97;
/** Task types tracked per user; the least used one gives way to a new one. */
export const MAX_TASK_TYPES = TASK_SLOTS - 1;
/** The stored format's name: a state of any other is not read (a fresh state replaces it). */
export const STATE_FORMAT = 'engine-v3';

/**
 * A column of the stored state: valid where `described` (zod's own array schema for it) is, and
 * described by it in JSON Schema (the cached formats' fingerprint reads that), but checked by
 * `valid` in one pass. Zod's arrays copy a column and run each element's schema, and a state
 * holds some 600 numbers that the API and the worker read again after each of the user's
 * outcomes, where that cost several times the rest of the read (docs/BENCHMARKS.md, "Engine
 * cost"). The column is kept as read, not copied: states are never changed in place
 * (shared/domain/engine/README.md).
 */
function column<T>(described: z.ZodArray<z.ZodType<T>>, valid: (column: unknown[]) => boolean, expected: string) {
  const { $schema: _, ...jsonSchema } = z.toJSONSchema(described);
  return z.custom<T[]>((value) => Array.isArray(value) && valid(value), { error: `${expected} expected` }).meta(jsonSchema);
}

/** A column of numbers from `min` to `max` (whole ones when `whole`), `length` of them when given. */
function numbers({
  min = -Infinity,
  max = Infinity,
  whole = false,
  length,
}: {
  min?: number;
  max?: number;
  whole?: boolean;
  length?: number;
}) {
  let element = whole ? z.number().int() : z.number();
  if (min !== -Infinity) element = element.min(min);
  if (max !== Infinity) element = element.max(max);
  const described = length === undefined ? z.array(element) : z.array(element).length(length);
  const valid = (xs: unknown[]): boolean => {
    if (length !== undefined && xs.length !== length) return false;
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i];
      if (typeof x !== 'number' || !Number.isFinite(x) || x < min || x > max || (whole && x % 1 !== 0)) return false;
    }
    return true;
  };
  const range = max !== Infinity ? ` from ${min} to ${max}` : min !== -Infinity ? ` of at least ${min}` : '';
  return column(described, valid, `${length ?? 'an array of'} ${whole ? 'whole numbers' : 'numbers'}${range}`);
}

const booleans = () => column(z.array(z.boolean()), (xs) => xs.every((x) => typeof x === 'boolean'), 'an array of booleans');
const indexesBelow = (count: number) => numbers({ min: 0, max: count - 1, whole: true });

/**
 * The latest outcomes, oldest first, one column per field (entry e is index e of every column):
 * a column per field keeps the stored JSON as small as a list of tuples while every field has
 * its name.
 */
const historySchema = z
  .object({
    /** The request's task complexity, as an index into TASK_COMPLEXITY; UNKNOWN_COMPLEXITY when it gave none. */
    taskComplexity: indexesBelow(UNKNOWN_COMPLEXITY + 1),
    /** 0 for no task type (or one no longer tracked), i ≥ 1 for taskTypes[i − 1]. */
    taskSlot: indexesBelow(MAX_TASK_TYPES + 1),
    /** The value shown, per dimension, as an index into the dimension's values (arms.ts, append-only). */
    shown: z.object(
      Object.fromEntries(DIMENSION_NAMES.map((dim) => [dim, indexesBelow(DIMENSIONS[dim].values.length)])) as Record<
        Dimension,
        ReturnType<typeof indexesBelow>
      >,
    ),
    reward: numbers({ min: 0, max: 1 }),
    /** Whether the user started the task. */
    started: booleans(),
  })
  .refine((history) => {
    const length = history.reward.length;
    return (
      length <= HISTORY_LENGTH &&
      history.taskComplexity.length === length &&
      history.taskSlot.length === length &&
      history.started.length === length &&
      DIMENSION_NAMES.every((dim) => history.shown[dim].length === length)
    );
  }, `columns of different lengths, or longer than ${HISTORY_LENGTH}`);
export type History = z.infer<typeof historySchema>;

/** One outcome of the history (entry e of each column). */
export interface Outcome {
  taskComplexity: number;
  taskSlot: number;
  shown: Record<Dimension, number>;
  reward: number;
  started: boolean;
}

const cells = numbers({ length: CELL_COUNT });
const nonNegativeCells = numbers({ min: 0, length: CELL_COUNT });

/** Evidence of outcomes older than the history, per (complexity, value) cell (layout.ts), decayed. */
const olderSchema = z.object({
  /** Decayed count of outcomes (n in the model). */
  weight: nonNegativeCells,
  /** Weighted sum of the reward credited to the value: the reward less the other dimensions' expected part (s in the model). */
  creditedRewardSum: cells,
  /** Weighted sums of the whole reward and of tasks started (what the rationale quotes). */
  rewardSum: nonNegativeCells,
  startedSum: nonNegativeCells,
});
export type Older = z.infer<typeof olderSchema>;

/** The learned best value per dimension and the profile phase, as of the last update. */
const summarySchema = z.object({
  best: choiceSchema,
  phase: profilePhaseSchema,
});
export type Summary = z.infer<typeof summarySchema>;

export const engineStateSchema = z
  .object({
    learner: z.literal(STATE_FORMAT),
    /** Outcomes applied (not decayed). */
    outcomes: z.number().int().min(0),
    history: historySchema,
    /** Tracked task types: history slot i ≥ 1 is taskTypes[i − 1]. */
    taskTypes: z.array(z.string().min(1).max(100)).max(MAX_TASK_TYPES),
    older: olderSchema,
    /** Change detector: one-sided CUSUM of how far rewards fell short of the prediction. */
    shortfall: z.number().min(0),
    /** How many of the latest outcomes belong to the detector's current excursion above 0. */
    excursion: z.number().int().min(0),
    summary: summarySchema,
  })
  .refine((state) => state.history.taskSlot.every((slot) => slot <= state.taskTypes.length), 'task-type slot out of range')
  .refine((state) => state.excursion <= state.history.reward.length, 'excursion longer than the history')
  .refine((state) => new Set(state.taskTypes).size === state.taskTypes.length, 'task types repeat');
export type EngineState = z.infer<typeof engineStateSchema>;

export const emptyOlder = (): Older => ({
  weight: zeros(CELL_COUNT),
  creditedRewardSum: zeros(CELL_COUNT),
  rewardSum: zeros(CELL_COUNT),
  startedSum: zeros(CELL_COUNT),
});

export function emptyHistory(): History {
  const shown = {} as Record<Dimension, number[]>;
  for (const dim of DIMENSION_NAMES) shown[dim] = [];
  return { taskComplexity: [], taskSlot: [], shown, reward: [], started: [] };
}

/** Outcomes in the history. */
export const historyLength = (history: History): number => history.reward.length;

/** Entry e of the history as one outcome. */
export function outcomeAt(history: History, e: number): Outcome {
  const shown = {} as Record<Dimension, number>;
  for (const dim of DIMENSION_NAMES) shown[dim] = history.shown[dim][e]!;
  return {
    taskComplexity: history.taskComplexity[e]!,
    taskSlot: history.taskSlot[e]!,
    shown,
    reward: history.reward[e]!,
    started: history.started[e]!,
  };
}

/**
 * A column's values from `start` on, then `added`. Every update copies the whole history, so
 * the copy is made at its final length (which also keeps the column's element kind: rewards
 * stay unboxed doubles): one `concat`, or when entries are dropped one slice, shifted down by
 * one to make room. A slice and a push would allocate the column twice.
 */
function keptThen<T>(values: readonly T[], start: number, added: T): T[] {
  if (start === 0) return values.concat([added]);
  const kept = values.slice(start - 1);
  for (let i = 1; i < kept.length; i++) kept[i - 1] = kept[i]!;
  kept[kept.length - 1] = added;
  return kept;
}

/** The history's entries from `start` on, then `outcome` (when given): a new history. */
export function historyFrom(history: History, start: number, outcome?: Outcome): History {
  if (!outcome) {
    const shown = {} as Record<Dimension, number[]>;
    for (const dim of DIMENSION_NAMES) shown[dim] = history.shown[dim].slice(start);
    return {
      taskComplexity: history.taskComplexity.slice(start),
      taskSlot: history.taskSlot.slice(start),
      shown,
      reward: history.reward.slice(start),
      started: history.started.slice(start),
    };
  }
  const shown = {} as Record<Dimension, number[]>;
  for (const dim of DIMENSION_NAMES) shown[dim] = keptThen(history.shown[dim], start, outcome.shown[dim]);
  return {
    taskComplexity: keptThen(history.taskComplexity, start, outcome.taskComplexity),
    taskSlot: keptThen(history.taskSlot, start, outcome.taskSlot),
    shown,
    reward: keptThen(history.reward, start, outcome.reward),
    started: keptThen(history.started, start, outcome.started),
  };
}

/**
 * The slot of a tracked task type (1…MAX_TASK_TYPES); 0 when it is absent or not tracked. An
 * empty task type (the API allows `""`) is no task type: it is never tracked.
 */
export function taskSlotOf(state: EngineState, taskType: string | undefined): number {
  if (!taskType) return 0;
  return state.taskTypes.indexOf(taskType) + 1;
}

/**
 * The task types and history after an outcome of `taskType` arrives, and that outcome's slot.
 * A new type takes a free slot, or the slot of the tracked type with the least (decayed)
 * evidence in the history, whose outcomes then count as untyped.
 */
export function withTaskType(
  { taskTypes, history }: Pick<EngineState, 'taskTypes' | 'history'>,
  taskType: string | undefined,
): { taskTypes: string[]; history: History; slot: number } {
  const known = taskType ? taskTypes.indexOf(taskType) + 1 : 0;
  if (!taskType || known > 0) return { taskTypes, history, slot: known };
  if (taskTypes.length < MAX_TASK_TYPES) {
    return { taskTypes: [...taskTypes, taskType], history, slot: taskTypes.length + 1 };
  }
  const weight = new Array<number>(MAX_TASK_TYPES + 1).fill(0);
  const last = historyLength(history) - 1;
  history.taskSlot.forEach((slot, i) => (weight[slot]! += Math.pow(DECAY, last - i)));
  let weakest = 1;
  for (let slot = 2; slot <= MAX_TASK_TYPES; slot++) if (weight[slot]! < weight[weakest]!) weakest = slot;
  return {
    taskTypes: taskTypes.map((name, i) => (i + 1 === weakest ? taskType : name)),
    history: { ...history, taskSlot: history.taskSlot.map((slot) => (slot === weakest ? 0 : slot)) },
    slot: weakest,
  };
}

const isEmpty = (older: Older): boolean =>
  older.weight.every(isZero) && older.creditedRewardSum.every(isZero) && older.rewardSum.every(isZero) && older.startedSum.every(isZero);
const isZero = (x: number): boolean => x === 0;

/** A column of older sums decayed by one outcome (a loop: `map` with a callback costs more than the cells). */
function decayed(column: readonly number[]): number[] {
  const next = column.slice();
  for (let cell = 0; cell < next.length; cell++) next[cell] = round4(next[cell]! * DECAY);
  return next;
}

/**
 * `older` after one more outcome, plus an outcome leaving the history with its credited rewards
 * and value slots per dimension, spread over the complexities by `spread` (one-hot when its
 * complexity is known).
 */
export function decayOlder(
  older: Older,
  leaving: { outcome: Outcome; credited: ArrayLike<number>; slots: ArrayLike<number>; spread: ArrayLike<number> } | null,
): Older {
  // Until a user's history first fills, nothing is older: the empty sums decay to themselves.
  if (!leaving && isEmpty(older)) return older;
  const next: Older = {
    weight: decayed(older.weight),
    creditedRewardSum: decayed(older.creditedRewardSum),
    rewardSum: decayed(older.rewardSum),
    startedSum: decayed(older.startedSum),
  };
  if (leaving) {
    const weight = Math.pow(DECAY, HISTORY_LENGTH);
    const { outcome, credited, slots, spread } = leaving;
    const started = outcome.started ? 1 : 0;
    for (let d = 0; d < DIMENSION_NAMES.length; d++) {
      for (let c = 0; c < COMPLEXITY_COUNT; c++) {
        if (spread[c] === 0) continue;
        const cell = cellIndex(c, slots[d]!);
        const part = weight * spread[c]!;
        next.weight[cell] = round4(next.weight[cell]! + part);
        next.creditedRewardSum[cell] = round4(next.creditedRewardSum[cell]! + part * credited[d]!);
        next.rewardSum[cell] = round4(next.rewardSum[cell]! + part * outcome.reward);
        next.startedSum[cell] = round4(next.startedSum[cell]! + part * started);
      }
    }
  }
  return next;
}
