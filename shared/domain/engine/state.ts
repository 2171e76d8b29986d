import { z } from 'zod';
import { DIMENSIONS, DIMENSION_NAMES, profilePhaseSchema } from '../arms';
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

const valueIndexSchema = (count: number) =>
  z
    .number()
    .int()
    .min(0)
    .max(count - 1);

/**
 * One outcome: [complexity, framing, style, complexity handling, encouragement, task-type slot,
 * reward, started] — value indices into the documented value sets (complexity UNKNOWN_COMPLEXITY
 * when the request gave none), task-type slot 0 for none (or a type no longer tracked), i ≥ 1 for
 * taskTypes[i − 1]; started is 1 or 0.
 */
const entrySchema = z.tuple([
  valueIndexSchema(UNKNOWN_COMPLEXITY + 1),
  ...(DIMENSION_NAMES.map((dim) => valueIndexSchema(DIMENSIONS[dim].values.length)) as [
    z.ZodNumber,
    z.ZodNumber,
    z.ZodNumber,
    z.ZodNumber,
  ]),
  z.number().int().min(0).max(MAX_TASK_TYPES),
  z.number().min(0).max(1),
  z.union([z.literal(0), z.literal(1)]),
]);
export type Entry = z.infer<typeof entrySchema>;
export const ENTRY_COMPLEXITY = 0;
export const ENTRY_TASK_SLOT = 5;
export const ENTRY_REWARD = 6;
export const ENTRY_STARTED = 7;
/** Index in an entry of dimension d's value (d in DIMENSION_NAMES order). */
export const entryValue = (d: number) => 1 + d;

const cells = z.array(z.number()).length(CELL_COUNT);
const nonNegativeCells = z.array(z.number().min(0)).length(CELL_COUNT);

/** Evidence of outcomes older than the history, per (complexity, value) cell, decayed. */
const olderSchema = z.object({
  /** Weight (decayed count). */
  n: nonNegativeCells,
  /** Weighted sum of the reward credited to the value (the reward less the other dimensions' expected part). */
  s: cells,
  /** Weighted sum of the raw reward, and of tasks started (for the rationale). */
  r: nonNegativeCells,
  st: nonNegativeCells,
});
export type Older = z.infer<typeof olderSchema>;

/** The learned best value index per dimension and the profile phase, as of the last update. */
const summarySchema = z.object({
  best: z.tuple([z.number().int().min(0), z.number().int().min(0), z.number().int().min(0), z.number().int().min(0)]),
  phase: profilePhaseSchema,
});
export type Summary = z.infer<typeof summarySchema>;

export const engineStateSchema = z
  .object({
    learner: z.literal('engine-v2'),
    /** Outcomes applied (not decayed). */
    outcomes: z.number().int().min(0),
    /** The latest outcomes, oldest first. */
    history: z.array(entrySchema).max(HISTORY_LENGTH),
    /** Tracked task types: history slot i ≥ 1 is taskTypes[i − 1]. */
    taskTypes: z.array(z.string().min(1).max(100)).max(MAX_TASK_TYPES),
    older: olderSchema,
    /** Change detector: one-sided CUSUM of how far rewards fell short of the prediction. */
    shortfall: z.number().min(0),
    /** How many of the latest outcomes belong to the detector's current excursion above 0. */
    excursion: z.number().int().min(0),
    summary: summarySchema,
  })
  .refine((state) => state.history.every((entry) => entry[ENTRY_TASK_SLOT] <= state.taskTypes.length), 'task-type slot out of range')
  .refine((state) => state.excursion <= state.history.length, 'excursion longer than the history')
  .refine((state) => new Set(state.taskTypes).size === state.taskTypes.length, 'task types repeat');
export type EngineState = z.infer<typeof engineStateSchema>;

export const emptyOlder = (): Older => ({ n: zeros(CELL_COUNT), s: zeros(CELL_COUNT), r: zeros(CELL_COUNT), st: zeros(CELL_COUNT) });

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
export function withTaskType(state: EngineState, taskType: string | undefined): { taskTypes: string[]; history: Entry[]; slot: number } {
  const known = taskSlotOf(state, taskType);
  if (!taskType || known > 0) return { taskTypes: state.taskTypes, history: state.history, slot: known };
  if (state.taskTypes.length < MAX_TASK_TYPES) {
    return { taskTypes: [...state.taskTypes, taskType], history: state.history, slot: state.taskTypes.length + 1 };
  }
  const weight = new Array<number>(MAX_TASK_TYPES + 1).fill(0);
  const last = state.history.length - 1;
  state.history.forEach((entry, i) => (weight[entry[ENTRY_TASK_SLOT]]! += Math.pow(DECAY, last - i)));
  let weakest = 1;
  for (let slot = 2; slot <= MAX_TASK_TYPES; slot++) if (weight[slot]! < weight[weakest]!) weakest = slot;
  const taskTypes = state.taskTypes.map((name, i) => (i + 1 === weakest ? taskType : name));
  const history = state.history.map((entry): Entry => (entry[ENTRY_TASK_SLOT] === weakest ? withSlot(entry, 0) : entry));
  return { taskTypes, history, slot: weakest };
}

const withSlot = (entry: Entry, slot: number): Entry => {
  const copy = [...entry] as Entry;
  copy[ENTRY_TASK_SLOT] = slot;
  return copy;
};

/**
 * `older` after one more outcome, plus an outcome leaving the history with its credited rewards
 * and value slots per dimension, spread over the complexities by `spread` (one-hot when its
 * complexity is known).
 */
export function decayOlder(
  older: Older,
  leaving: { entry: Entry; credited: ArrayLike<number>; slots: ArrayLike<number>; spread: ArrayLike<number> } | null,
): Older {
  const next: Older = {
    n: older.n.map((x) => round4(x * DECAY)),
    s: older.s.map((x) => round4(x * DECAY)),
    r: older.r.map((x) => round4(x * DECAY)),
    st: older.st.map((x) => round4(x * DECAY)),
  };
  if (leaving) {
    const weight = Math.pow(DECAY, HISTORY_LENGTH);
    const { entry, credited, slots, spread } = leaving;
    for (let d = 0; d < DIMENSION_NAMES.length; d++) {
      for (let c = 0; c < COMPLEXITY_COUNT; c++) {
        if (spread[c] === 0) continue;
        const cell = cellIndex(c, slots[d]!);
        const part = weight * spread[c]!;
        next.n[cell] = round4(next.n[cell]! + part);
        next.s[cell] = round4(next.s[cell]! + part * credited[d]!);
        next.r[cell] = round4(next.r[cell]! + part * entry[ENTRY_REWARD]);
        next.st[cell] = round4(next.st[cell]! + part * entry[ENTRY_STARTED]);
      }
    }
  }
  return next;
}
