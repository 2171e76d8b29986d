import { z } from 'zod';
import { DIMENSION_NAMES, TASK_COMPLEXITY, type Dimension } from '../arms';
import { CELL_COUNT, DIMENSION_OFFSET, cellIndex, valueCount } from './layout';
import { emptyOlder, type Older } from './state';

/**
 * States of the earlier learners, read as evidence without a history: `engine-v1` (per-value
 * Gaussian cells per task type) and `thompson-v1` (Beta cells per complexity). Both hold
 * decayed counts, reward sums and started counts per (complexity, value); they become the
 * `older` evidence of an engine-v2 state, with the whole reward credited to each value (the
 * earlier engines did not split it between dimensions). Kept while a database written by an
 * earlier build may hold them: nothing migrates stored states, and a profile's state is
 * rewritten in the new format only at that user's next outcome (ADR 0009, Consequences).
 */
const cells = z.array(z.number().min(0)).length(CELL_COUNT);
const engineV1Schema = z.object({
  learner: z.literal('engine-v1'),
  outcomes: z.number().int().min(0),
  slots: z.array(z.object({ n: cells, s: cells, st: cells })).min(1),
});

const thompsonCells = z.array(z.tuple([z.number().min(0), z.number().min(0), z.number().min(0)]));
const thompsonV1Schema = z.object({
  learner: z.literal('thompson-v1'),
  n: z.number().int().min(0),
  byComplexity: z.record(z.enum(TASK_COMPLEXITY), z.record(z.enum(DIMENSION_NAMES as [Dimension, ...Dimension[]]), thompsonCells)),
});

/** The outcome count and evidence of an earlier learner's state, or null when `raw` is none. */
export function fromLegacy(raw: unknown): { outcomes: number; older: Older } | null {
  const v1 = engineV1Schema.safeParse(raw);
  if (v1.success) {
    const older = emptyOlder();
    for (const slot of v1.data.slots) {
      for (let cell = 0; cell < CELL_COUNT; cell++) {
        older.n[cell]! += slot.n[cell]!;
        older.s[cell]! += slot.s[cell]!;
        older.r[cell]! += slot.s[cell]!;
        older.st[cell]! += slot.st[cell]!;
      }
    }
    return { outcomes: v1.data.outcomes, older };
  }
  const thompson = thompsonV1Schema.safeParse(raw);
  if (thompson.success) {
    const older = emptyOlder();
    TASK_COMPLEXITY.forEach((complexity, c) => {
      for (const dim of DIMENSION_NAMES) {
        thompson.data.byComplexity[complexity]?.[dim]?.forEach(([n, s, st], i) => {
          if (i >= valueCount(dim)) return;
          const cell = cellIndex(c, DIMENSION_OFFSET[dim] + i);
          older.n[cell] = n;
          older.s[cell] = s;
          older.r[cell] = s;
          older.st[cell] = st;
        });
      }
    });
    return { outcomes: thompson.data.n, older };
  }
  return null;
}
