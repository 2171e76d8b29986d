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
    // One message per field: text that cannot be stored is not checked further.
    .refine(isStorableText, { message: 'must be valid Unicode text without NUL characters', abort: true });

/** An Idempotency-Key header: 1–255 visible ASCII characters, no spaces (Stripe's limit: long enough for any UUID or composite key a client makes). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export const userIdSchema = text(1, 256).refine((value) => !CONTROL_CHARS.test(value), 'must not contain control characters');

/** Path parameters of /v1/profile/:userId routes. */
export const profilePathSchema = z.object({
  userId: userIdSchema.meta({ description: 'The user, URL-encoded: as userId in POST /v1/context.' }),
});

/** Depth, size and text are checked in one bounded walk (json-bounds.ts): no input can make it recurse. */
export const metadataSchema = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  const problem = jsonProblem(value, METADATA_BOUNDS);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/**
 * An optional field for which `null` means absent, as for every optional request field (PUT
 * pins aside). Nullable before the transform, so the OpenAPI document, which shows what a
 * request may send, lists `null` among the field's types.
 */
const absentWhenNull = <T extends z.ZodType>(schema: T, description: string) =>
  schema
    .nullable()
    .transform((value) => value ?? undefined)
    .optional()
    .meta({ description: `${description} \`null\` means absent.` });

export const contextRequestSchema = z
  .strictObject({
    userId: userIdSchema.meta({
      description: 'Your id of the end user: 1–256 characters, no control characters. An unknown user is created (cold_start).',
    }),
    task: text(1, 8000).meta({ description: 'The task the user is about to face, as shown to them: 1–8000 characters.' }),
    complexity: absentWhenNull(
      taskComplexitySchema,
      "How demanding the task is. Without it the choice draws on the user's beliefs across complexities.",
    ),
    taskType: absentWhenNull(
      text(0, 100),
      'A kind of task, e.g. "email": at most 100 characters. Up to 3 task types are learned apart per user.',
    ),
    metadata: absentWhenNull(
      metadataSchema,
      'Any JSON object, recorded with the decision and not used to make it: at most 8 KiB serialized, nested at most 8 levels deep.',
    ),
  })
  .meta({ id: 'ContextRequest', description: 'A user about to face a task.' });
export type ContextRequest = z.infer<typeof contextRequestSchema>;

const signals = outcomeSignalsSchema.shape;
export const outcomeRequestSchema = z
  .strictObject({
    requestId: z
      .string()
      .regex(REQUEST_ID_PATTERN, 'must be a requestId returned by POST /v1/context (req_…)')
      .meta({ description: 'The requestId of the context call whose outcome this is; the outcome applies to its user and choice.' }),
    started: signals.started.meta({ description: 'Whether the user started the task.' }),
    completed: absentWhenNull(signals.completed, 'Whether the user completed the task.'),
    timeToStart: absentWhenNull(signals.timeToStart, 'Seconds from the context call until the user started: finite, at least 0.'),
    flowState: absentWhenNull(signals.flowState, 'Whether the user was in flow while doing the task.'),
    satisfaction: absentWhenNull(signals.satisfaction, "The user's satisfaction, from 0 to 1."),
    metadata: absentWhenNull(
      metadataSchema,
      'Any JSON object, stored with the outcome and not used for learning: at most 8 KiB serialized, nested at most 8 levels deep.',
    ),
  })
  .meta({ id: 'OutcomeRequest', description: 'What happened after a context call: its signals, absent ones unknown.' });
export type OutcomeRequest = z.infer<typeof outcomeRequestSchema>;

const profile = profileResponseSchema.shape;
const PINNABLE_FIELDS = DIMENSION_NAMES.map((dim) => DIMENSIONS[dim].profileField);
/**
 * A value pins a dimension and `null` unpins it. The profile's read-only fields are accepted so
 * that a profile as GET returns it can be sent back (checked against the profile by
 * profile-update.ts); `null` for them means absent.
 */
const pin = <T extends z.ZodType>(schema: T, dimension: string) =>
  schema
    .nullable()
    .optional()
    .meta({ description: `A value pins the ${dimension}: context calls return it. \`null\` unpins it (back to the learned value).` });
const readOnly = (field: string) =>
  `Read-only, accepted so that a profile as GET returns it can be sent back: must be the profile's current ${field}.`;

export const profileUpdateSchema = z
  .strictObject({
    preferredFraming: pin(framingSchema, 'framing'),
    communicationStyle: pin(styleSchema, 'communication style'),
    complexityPreference: pin(complexityHandlingSchema, 'complexity handling'),
    encouragementLevel: pin(encouragementSchema, 'encouragement level'),
    userId: absentWhenNull(
      profile.userId,
      'Read-only, accepted so that a profile as GET returns it can be sent back: the userId in the path.',
    ),
    pinned: absentWhenNull(profile.pinned, readOnly('pins, in any order')),
    profilePhase: absentWhenNull(profile.profilePhase, readOnly('phase')),
    interactionCount: absentWhenNull(profile.interactionCount, readOnly('interactionCount')),
    // Any spelling of the same instant: clients may re-serialize the timestamp with an offset.
    lastUpdated: absentWhenNull(z.iso.datetime({ offset: true }), readOnly('lastUpdated, as the same instant in any offset')),
    profileVersion: absentWhenNull(profile.profileVersion, readOnly('profileVersion')),
  })
  .refine((body) => PINNABLE_FIELDS.some((field) => body[field] !== undefined), {
    message: 'provide at least one field to update',
    path: [],
  })
  .meta({ id: 'ProfileUpdate', description: 'Pins to set or clear: at least one of the four dimensions.' });
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
