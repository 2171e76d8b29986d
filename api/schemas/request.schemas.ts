import { z } from 'zod';
import {
  complexityHandlingSchema,
  encouragementSchema,
  framingSchema,
  styleSchema,
  taskComplexitySchema,
} from '../../shared/domain/arms';
import { outcomeSignalsSchema } from '../../shared/domain/reward';

/** Request bodies of SPEC §4. Strict: unknown fields are a VALIDATION_ERROR. */
export const METADATA_MAX_BYTES = 8 * 1024;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

export const userIdSchema = z
  .string()
  .min(1, 'must be 1 to 256 characters')
  .max(256, 'must be 1 to 256 characters')
  .refine((value) => !CONTROL_CHARS.test(value), 'must not contain control characters');

/** Path parameters of /v1/profile/:userId routes. */
export const profilePathSchema = z.object({ userId: userIdSchema });

export const metadataSchema = z
  .record(z.string(), z.unknown())
  .refine((value) => Buffer.byteLength(JSON.stringify(value), 'utf8') <= METADATA_MAX_BYTES, 'must be at most 8 KiB when serialized');

export const contextRequestSchema = z.strictObject({
  userId: userIdSchema,
  task: z.string().min(1, 'must be 1 to 8000 characters').max(8000, 'must be 1 to 8000 characters'),
  complexity: taskComplexitySchema,
  taskType: z.string().max(100, 'must be at most 100 characters').optional(),
  metadata: metadataSchema.optional(),
});
export type ContextRequest = z.infer<typeof contextRequestSchema>;

export const outcomeRequestSchema = outcomeSignalsSchema
  .extend({
    requestId: z.string(),
    metadata: metadataSchema.optional(),
  })
  .strict();
export type OutcomeRequest = z.infer<typeof outcomeRequestSchema>;

export const profileUpdateSchema = z
  .strictObject({
    preferredFraming: framingSchema.nullable().optional(),
    communicationStyle: styleSchema.nullable().optional(),
    complexityPreference: complexityHandlingSchema.nullable().optional(),
    encouragementLevel: encouragementSchema.nullable().optional(),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'provide at least one field to update', path: [] });
export type ProfileUpdate = z.infer<typeof profileUpdateSchema>;

export const versionsQuerySchema = z.strictObject({
  limit: z.coerce.number().int('must be an integer').min(1, 'must be 1 to 100').max(100, 'must be 1 to 100').default(20),
  before: z
    .string()
    .regex(/^v?\d+$/, 'must be a profileVersion such as v12')
    .transform((value) => Number(value.replace(/^v/, '')))
    .optional(),
});
