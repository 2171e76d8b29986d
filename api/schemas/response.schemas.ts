import { z } from 'zod';
import { complexityHandlingSchema, encouragementSchema, framingSchema, profilePhaseSchema, styleSchema } from '../../shared/domain/arms';
import { ERROR_STATUS, type ErrorCode } from '../../shared/errors/app-error';
import { scopeSchema } from '../../shared/credentials/api-key';
import { REQUEST_ID_PATTERN } from '../../shared/ids/request-id';
import { changeableFieldSchema, profileResponseSchema } from '../../shared/profile/profile';
import { ERROR_DOCS } from './error-docs';

/**
 * Response bodies (docs/API.md): the types the services return and the OpenAPI document's
 * schemas. Responses are not validated at run time; integration tests check them against the
 * document.
 */
export const contextResponseSchema = z
  .object({
    requestId: z.string().regex(REQUEST_ID_PATTERN).meta({ description: 'Unique, unguessable and signed; pass it to POST /v1/outcome.' }),
    suggestedFraming: framingSchema,
    communicationStyle: styleSchema,
    complexity: complexityHandlingSchema,
    encouragement: encouragementSchema,
    confidence: z.number().min(0).max(1).meta({ description: "Probability that this combination is this user's best here (4 decimals)." }),
    rationale: z.string().min(1).meta({ description: "One or two sentences built from this user's evidence." }),
    metadata: z.object({
      profilePhase: profilePhaseSchema,
      interactionCount: z.number().int().min(0).meta({ description: "Outcomes applied to this user's profile so far." }),
      explorationMode: z.boolean().meta({ description: 'True when at least one dimension was chosen to explore.' }),
    }),
  })
  .meta({ id: 'ContextResponse', description: 'How to present the task; a pinned dimension always returns its pinned value.' });
export type ContextResponse = z.infer<typeof contextResponseSchema>;

export const outcomeAcceptedSchema = z
  .object({ success: z.literal(true), message: z.string() })
  .meta({ id: 'OutcomeAccepted', description: 'The outcome is enqueued; a worker applies it to the profile shortly.' });
export type OutcomeAccepted = z.infer<typeof outcomeAcceptedSchema>;

export const profileSchema = profileResponseSchema.meta({
  id: 'Profile',
  description: 'Current choice per dimension (the pinned value if pinned, else the learned best), pins, phase and version.',
});

export const profileVersionSchema = z
  .object({
    profileVersion: z.string().regex(/^v\d+$/),
    cause: z.enum(['outcome', 'manual', 'reset']).meta({ description: 'outcome: an applied outcome; manual: an effective PUT.' }),
    changed: z.array(z.string()).meta({
      description: `Profile fields whose value differs from the previous version, among ${changeableFieldSchema.options.join(', ')}.`,
    }),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'ProfileVersion' });

export const versionsPageSchema = z
  .object({
    data: z.array(profileVersionSchema).meta({ description: 'Newest first; the creation of the profile (v0) has no entry.' }),
    hasMore: z.boolean().meta({ description: 'Next page: ?before=<profileVersion of the last entry>.' }),
  })
  .meta({ id: 'VersionsPage' });
export type VersionsPage = z.infer<typeof versionsPageSchema>;

const fieldErrorsDetails = z.object({
  fields: z
    .array(
      z
        .object({
          field: z.string().meta({ description: 'Dotted path of the field; "(body)": the whole body; "(request)": the whole request.' }),
          message: z.string(),
          allowed: z.array(z.string()).optional().meta({ description: 'The allowed values of a field with a fixed value set.' }),
        })
        .meta({ id: 'FieldError' }),
    )
    .min(1),
});

/** `details` per code: `always` when every error with that code carries them. */
const ERROR_DETAILS: { [C in ErrorCode]?: { schema: z.ZodType; always: boolean } } = {
  INVALID_USER_ID: { schema: fieldErrorsDetails, always: false },
  INVALID_REQUEST_ID: { schema: fieldErrorsDetails, always: false },
  VALIDATION_ERROR: { schema: fieldErrorsDetails, always: true },
  FORBIDDEN: { schema: z.object({ requiredScope: scopeSchema }), always: true },
  OUTCOME_WINDOW_CLOSED: { schema: z.object({ issuedAt: z.iso.datetime(), windowSeconds: z.number().int().min(0) }), always: true },
  PAYLOAD_TOO_LARGE: { schema: z.object({ limit: z.number().int() }), always: true },
  HEADERS_TOO_LARGE: { schema: z.object({ limit: z.number().int() }), always: true },
  RATE_LIMIT_EXCEEDED: {
    schema: z.object({
      limit: z.number().int(),
      window: z.string().regex(/^\d+s$/),
      retryAfter: z.number().int().min(0),
      scope: z.enum(['second', 'month']),
    }),
    always: true,
  },
};

/** `INVALID_USER_ID` → `InvalidUserIdError`: the code's component name in the document. */
const errorSchemaId = (code: ErrorCode) =>
  `${code
    .toLowerCase()
    .split('_')
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('')}Error`;

function errorSchema(code: ErrorCode) {
  const details = ERROR_DETAILS[code];
  return z
    .object({
      error: z.object({
        code: z.literal(code),
        message: z.string(),
        statusCode: z.literal(ERROR_STATUS[code]),
        ...(details ? { details: details.always ? details.schema : details.schema.optional() } : {}),
      }),
    })
    .meta({ id: errorSchemaId(code), description: ERROR_DOCS[code].when });
}

/** The error envelope, one schema per code (a code's status and details are fixed). */
export const ERROR_SCHEMAS = Object.fromEntries(
  (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => [code, errorSchema(code)]),
) as Record<ErrorCode, ReturnType<typeof errorSchema>>;
