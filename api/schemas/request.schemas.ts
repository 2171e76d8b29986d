import { z } from 'zod';
import {
  DIMENSIONS,
  DIMENSION_NAMES,
  complexityHandlingSchema,
  encouragementSchema,
  framingSchema,
  styleSchema,
  taskComplexitySchema,
} from '../../shared/domain/arms';
import { profileResponseSchema } from '../../shared/profile/profile';
import { outcomeSignalsSchema } from '../../shared/domain/reward';
import { REQUEST_ID_PATTERN } from '../../shared/ids/request-id';
import { isStorableText, jsonProblem, type JsonBounds } from './json-bounds';

/** Request bodies (docs/API.md). Strict: unknown fields are a VALIDATION_ERROR. */
export const METADATA_BOUNDS: JsonBounds = { maxDepth: 8, maxBytes: 8 * 1024 };
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

const text = (min: number, max: number) =>
  z
    .string()
    .min(min, min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters`)
    .max(max, min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters`)
    .refine(isStorableText, 'must be valid Unicode text without NUL characters');

export const userIdSchema = text(1, 256).refine((value) => !CONTROL_CHARS.test(value), 'must not contain control characters');

/** Path parameters of /v1/profile/:userId routes. */
export const profilePathSchema = z.object({ userId: userIdSchema });

/** Depth, size and text are checked in one bounded walk (json-bounds.ts): no input can make it recurse. */
export const metadataSchema = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  const problem = jsonProblem(value, METADATA_BOUNDS);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** An optional field for which `null` means absent, as for every optional request field (PUT pins aside). */
const absentWhenNull = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === null ? undefined : value), schema.optional());

export const contextRequestSchema = z.strictObject({
  userId: userIdSchema,
  task: text(1, 8000),
  complexity: absentWhenNull(taskComplexitySchema),
  taskType: absentWhenNull(text(0, 100)),
  metadata: absentWhenNull(metadataSchema),
});
export type ContextRequest = z.infer<typeof contextRequestSchema>;

const signals = outcomeSignalsSchema.shape;
export const outcomeRequestSchema = z.strictObject({
  requestId: z.string().regex(REQUEST_ID_PATTERN, 'must be a requestId returned by POST /v1/context (req_…)'),
  started: signals.started,
  completed: absentWhenNull(signals.completed),
  timeToStart: absentWhenNull(signals.timeToStart),
  flowState: absentWhenNull(signals.flowState),
  satisfaction: absentWhenNull(signals.satisfaction),
  metadata: absentWhenNull(metadataSchema),
});
export type OutcomeRequest = z.infer<typeof outcomeRequestSchema>;

const profile = profileResponseSchema.shape;
const PINNABLE_FIELDS = DIMENSION_NAMES.map((dim) => DIMENSIONS[dim].profileField);
/**
 * A value pins a dimension and `null` unpins it. The profile's read-only fields are accepted so
 * that a profile as GET returns it can be sent back (checked against the profile by
 * profile-update.ts); `null` for them means absent.
 */
export const profileUpdateSchema = z
  .strictObject({
    preferredFraming: framingSchema.nullable().optional(),
    communicationStyle: styleSchema.nullable().optional(),
    complexityPreference: complexityHandlingSchema.nullable().optional(),
    encouragementLevel: encouragementSchema.nullable().optional(),
    userId: absentWhenNull(profile.userId),
    pinned: absentWhenNull(profile.pinned),
    profilePhase: absentWhenNull(profile.profilePhase),
    interactionCount: absentWhenNull(profile.interactionCount),
    // Any spelling of the same instant: clients may re-serialize the timestamp with an offset.
    lastUpdated: absentWhenNull(z.iso.datetime({ offset: true })),
    profileVersion: absentWhenNull(profile.profileVersion),
  })
  .refine((body) => PINNABLE_FIELDS.some((field) => body[field] !== undefined), {
    message: 'provide at least one field to update',
    path: [],
  });
export type ProfileUpdate = z.infer<typeof profileUpdateSchema>;

export const versionsQuerySchema = z.strictObject({
  limit: z
    .string()
    .regex(/^\d{1,3}$/, 'must be an integer from 1 to 100')
    .transform(Number)
    .pipe(z.number().min(1, 'must be an integer from 1 to 100').max(100, 'must be an integer from 1 to 100'))
    .default(20)
    .meta({ description: 'Page size: an integer from 1 to 100 in plain digits; default 20.' }),
  before: z
    .string()
    .regex(/^v?\d{1,10}$/, 'must be a profileVersion such as v12')
    .transform((value) => Number(value.replace(/^v/, '')))
    .pipe(z.number().max(2_147_483_647, 'must be a profileVersion such as v12'))
    .optional()
    .meta({ description: 'Only versions below this profileVersion (v12 or 12): the last profileVersion of the previous page.' }),
});
