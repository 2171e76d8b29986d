import { z } from 'zod';

/**
 * Value sets (docs/API.md) — the single definition used by validation, the learner and docs.
 *
 * Append-only: a value's index is what is stored — in a learner state's history, in the
 * per-(complexity, value) sums of states and population priors, and sealed in requestIds — so a
 * value may be added at the end (a new stored format: the sums' arrays change length), never
 * moved or removed, which would make stored indices name other values. test/unit/arms.test.ts
 * keeps the lists as they were.
 */
export const FRAMINGS = ['micro_steps', 'time_boxed', 'purpose', 'challenge', 'curiosity'] as const;
export const STYLES = ['direct', 'warm', 'structured', 'playful'] as const;
export const COMPLEXITY_HANDLING = ['chunked', 'scaffolded', 'whole'] as const;
export const ENCOURAGEMENT = ['minimal', 'moderate', 'enthusiastic'] as const;
export const TASK_COMPLEXITY = ['low', 'medium', 'high'] as const;
export const PROFILE_PHASES = ['cold_start', 'learning', 'established'] as const;

export const framingSchema = z.enum(FRAMINGS);
export const styleSchema = z.enum(STYLES);
export const complexityHandlingSchema = z.enum(COMPLEXITY_HANDLING);
export const encouragementSchema = z.enum(ENCOURAGEMENT);
export const taskComplexitySchema = z.enum(TASK_COMPLEXITY);
export const profilePhaseSchema = z.enum(PROFILE_PHASES);

export type TaskComplexity = z.infer<typeof taskComplexitySchema>;
export type ProfilePhase = z.infer<typeof profilePhaseSchema>;

/**
 * The four presentation dimensions the learner chooses. `field` is the name in the context
 * response, `profileField` the name in the profile object and PUT body. The dimension the
 * response calls `complexity` is how a task's complexity is handled (`complexityHandling`),
 * not the task's complexity (`TaskComplexity`, the request's `complexity`).
 */
export const DIMENSIONS = {
  framing: { values: FRAMINGS, field: 'suggestedFraming', profileField: 'preferredFraming' },
  style: { values: STYLES, field: 'communicationStyle', profileField: 'communicationStyle' },
  complexityHandling: { values: COMPLEXITY_HANDLING, field: 'complexity', profileField: 'complexityPreference' },
  encouragement: { values: ENCOURAGEMENT, field: 'encouragement', profileField: 'encouragementLevel' },
} as const;

export type Dimension = keyof typeof DIMENSIONS;
/** Append-only too: per-dimension sums and a requestId's sealed choice are in this order. */
export const DIMENSION_NAMES = Object.keys(DIMENSIONS) as Dimension[];

/** One value per dimension: what a context response recommends. */
export const choiceSchema = z.object({
  framing: framingSchema,
  style: styleSchema,
  complexityHandling: complexityHandlingSchema,
  encouragement: encouragementSchema,
});
export type Choice = z.infer<typeof choiceSchema>;

/** Pins set through PUT /v1/profile: a pinned dimension always returns its pinned value. */
export const pinsSchema = z
  .object({
    framing: framingSchema,
    style: styleSchema,
    complexityHandling: complexityHandlingSchema,
    encouragement: encouragementSchema,
  })
  .partial();
export type Pins = z.infer<typeof pinsSchema>;
