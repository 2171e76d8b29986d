import { z } from 'zod';
import { DIMENSION_NAMES, profilePhaseSchema, type Choice, type Dimension } from '../arms';
import { CELL_COUNT, VALUE_COUNT, cellIndex, choiceSlots, round4, zeros } from './layout';

/**
 * One user's evidence: decayed outcome counts (n), reward sums (s) and started counts (st)
 * per (task complexity, value), kept per task type. Slot 0 holds outcomes without a task
 * type (or of a task type no longer tracked); slots 1…MAX_TASK_TYPES track the task types the
 * user has evidence for. When a new task type arrives and all are taken, the one with the
 * least evidence is folded into slot 0. Every outcome first decays all evidence by DECAY.
 */
export const MAX_TASK_TYPES = 3;
/** Per-outcome decay of a user's evidence: an outcome 23 outcomes old counts half. */
export const DECAY = 0.97;

const cellsSchema = z.array(z.number().min(0)).length(CELL_COUNT);
export const evidenceSlotSchema = z.object({
  taskType: z.string().max(100).nullable(),
  n: cellsSchema,
  s: cellsSchema,
  st: cellsSchema,
});
export type EvidenceSlot = z.infer<typeof evidenceSlotSchema>;

/** Evidence (decayed counts and reward sums, summed over task types) gathered since the change detector last stood at 0. */
export const excursionSchema = z.object({ n: cellsSchema, s: cellsSchema });
export type Excursion = z.infer<typeof excursionSchema>;
export const emptyExcursion = (): Excursion => ({ n: zeros(CELL_COUNT), s: zeros(CELL_COUNT) });

/** The learned best value index per dimension and the profile phase, as of the last update. */
export const summarySchema = z.object({
  best: z.tuple([z.number().int(), z.number().int(), z.number().int(), z.number().int()]),
  phase: profilePhaseSchema,
});

export const engineStateSchema = z.object({
  learner: z.literal('engine-v1'),
  /** Outcomes applied (not decayed). */
  outcomes: z.number().int().min(0),
  /** Change detector: one-sided CUSUM of how far rewards fell short of the prediction. */
  shortfall: z.number().min(0).default(0),
  /** The outcomes of the detector's current excursion above 0: the evidence of a change, kept when it is detected. */
  excursion: excursionSchema.default(emptyExcursion),
  slots: z
    .array(evidenceSlotSchema)
    .min(1)
    .max(MAX_TASK_TYPES + 1)
    .refine((slots) => slots[0]?.taskType === null && slots.slice(1).every((slot) => slot.taskType !== null), 'slot 0 is untyped'),
  summary: summarySchema,
});
export type EngineState = z.infer<typeof engineStateSchema>;

export const emptySlot = (taskType: string | null): EvidenceSlot => ({
  taskType,
  n: zeros(CELL_COUNT),
  s: zeros(CELL_COUNT),
  st: zeros(CELL_COUNT),
});

/** The slot tracking a task type; 0 (untyped) when it is absent or not tracked. */
export function slotOf(state: EngineState, taskType: string | undefined): number {
  if (taskType === undefined) return 0;
  const index = state.slots.findIndex((slot) => slot.taskType === taskType);
  return index < 0 ? 0 : index;
}

/** Evidence per (complexity, value) summed over task types. */
export function totals(state: EngineState): { n: Float64Array; s: Float64Array; st: Float64Array } {
  const n = new Float64Array(CELL_COUNT);
  const s = new Float64Array(CELL_COUNT);
  const st = new Float64Array(CELL_COUNT);
  for (const slot of state.slots) {
    for (let i = 0; i < CELL_COUNT; i++) {
      n[i]! += slot.n[i]!;
      s[i]! += slot.s[i]!;
      st[i]! += slot.st[i]!;
    }
  }
  return { n, s, st };
}

const slotWeight = (slot: EvidenceSlot) => slot.n.reduce((sum, x) => sum + x, 0);

function addInto(target: EvidenceSlot, source: EvidenceSlot): void {
  for (let i = 0; i < CELL_COUNT; i++) {
    target.n[i] = round4(target.n[i]! + source.n[i]!);
    target.s[i] = round4(target.s[i]! + source.s[i]!);
    target.st[i] = round4(target.st[i]! + source.st[i]!);
  }
}

/** A copy with the slot for this task type, creating it (and folding the weakest away) if needed. */
function withTaskTypeSlot(slots: EvidenceSlot[], taskType: string | undefined): { slots: EvidenceSlot[]; index: number } {
  if (taskType === undefined) return { slots, index: 0 };
  const found = slots.findIndex((slot) => slot.taskType === taskType);
  if (found >= 0) return { slots, index: found };
  if (slots.length <= MAX_TASK_TYPES) return { slots: [...slots, emptySlot(taskType)], index: slots.length };
  let weakest = 1;
  for (let i = 2; i < slots.length; i++) if (slotWeight(slots[i]!) < slotWeight(slots[weakest]!)) weakest = i;
  addInto(slots[0]!, slots[weakest]!);
  slots[weakest] = emptySlot(taskType);
  return { slots, index: weakest };
}

/**
 * After a detected change of preferences: the evidence from before the detector's current
 * excursion multiplied by `factor`, the excursion's own outcomes (those that revealed the
 * change) kept at full weight — per cell, evidence ← factor·(evidence − excursion) + excursion,
 * shared among the task-type slots in proportion to what each holds. Clears the excursion.
 */
export function discounted(state: EngineState, factor: number): EngineState {
  const { n, s } = totals(state);
  /** Per cell, the share of the total kept: factor, plus the excursion's part at full weight. */
  const keep = (total: ArrayLike<number>, kept: readonly number[], otherwise: (i: number) => number) =>
    Array.from(total, (x, i) => (x > 0 ? factor + (1 - factor) * Math.min(1, Math.max(0, kept[i]! / x)) : otherwise(i)));
  const kn = keep(n, state.excursion.n, () => factor);
  // Reward sums can be 0 where counts are not; their excursion share then follows the counts.
  const ks = keep(s, state.excursion.s, (i) => kn[i]!);
  const scale = (cells: number[], k: number[]) => cells.map((x, i) => round4(x * k[i]!));
  return {
    ...state,
    excursion: emptyExcursion(),
    slots: state.slots.map((slot) => ({ taskType: slot.taskType, n: scale(slot.n, kn), s: scale(slot.s, ks), st: scale(slot.st, kn) })),
  };
}

/** Decays all evidence (and the excursion), then adds one outcome of `choice` in (complexity, task type) and to the excursion. */
export function addOutcome(
  state: EngineState,
  complexity: number,
  taskType: string | undefined,
  choice: Choice,
  reward: number,
  started: boolean,
): EngineState {
  const decay = (cells: number[]) => cells.map((x) => round4(x * DECAY));
  const decayed = state.slots.map((slot) => ({ taskType: slot.taskType, n: decay(slot.n), s: decay(slot.s), st: decay(slot.st) }));
  const { slots, index } = withTaskTypeSlot(decayed, taskType);
  const target = slots[index]!;
  const excursion = { n: decay(state.excursion.n), s: decay(state.excursion.s) };
  const valueSlots = choiceSlots(choice);
  for (const dim of DIMENSION_NAMES) {
    const slot = valueSlots[dim as Dimension];
    if (slot < 0 || slot >= VALUE_COUNT) continue;
    const cell = cellIndex(complexity, slot);
    target.n[cell] = round4(target.n[cell]! + 1);
    target.s[cell] = round4(target.s[cell]! + reward);
    target.st[cell] = round4(target.st[cell]! + (started ? 1 : 0));
    excursion.n[cell] = round4(excursion.n[cell]! + 1);
    excursion.s[cell] = round4(excursion.s[cell]! + reward);
  }
  return { ...state, outcomes: state.outcomes + 1, slots, excursion };
}
