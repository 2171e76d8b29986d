import { z } from 'zod';
import { complexityHandlingSchema, encouragementSchema, framingSchema, profilePhaseSchema, styleSchema } from '../../shared/domain/arms';
import { ERROR_STATUS, errorDocUrl, type ErrorCode } from '../../shared/errors/app-error';
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
    suggestedFraming: framingSchema.meta({ description: 'How to frame the task.' }),
    communicationStyle: styleSchema.meta({ description: 'The tone to present it in.' }),
    complexity: complexityHandlingSchema.meta({ description: "How to handle the task's complexity: in chunks, scaffolded or whole." }),
    encouragement: encouragementSchema.meta({ description: 'How much encouragement to give.' }),
    confidence: z.number().min(0).max(1).meta({ description: "Probability that this combination is this user's best here (4 decimals)." }),
    rationale: z.string().min(1).meta({ description: "One or two sentences built from this user's evidence." }),
    metadata: z
      .object({
        profilePhase: profilePhaseSchema.meta({
          description: 'cold_start: no outcomes yet; established: 10 or more and a clear favourite framing; learning: otherwise.',
        }),
        interactionCount: z.number().int().min(0).meta({ description: "Outcomes applied to this user's profile so far." }),
        explorationMode: z.boolean().meta({ description: 'True when at least one dimension was chosen to explore.' }),
      })
      .meta({ description: "The user's profile as this decision saw it." }),
  })
  .meta({ id: 'ContextResponse', description: 'How to present the task; a pinned dimension always returns its pinned value.' });
export type ContextResponse = z.infer<typeof contextResponseSchema>;

export const outcomeAcceptedSchema = z
  .object({
    success: z.literal(true).meta({ description: 'Always true: the outcome is accepted.' }),
    message: z.string().meta({ description: 'The same, for people.' }),
  })
  .meta({ id: 'OutcomeAccepted', description: 'The outcome is enqueued; a worker applies it to the profile shortly.' });
export type OutcomeAccepted = z.infer<typeof outcomeAcceptedSchema>;

const current = (dimension: string) => `The ${dimension} to use: the pinned value if pinned, else the learned best.`;
const profile = profileResponseSchema.shape;
/** The profile's fields described; `extend` keeps any field the shared schema gains. */
export const profileSchema = profileResponseSchema
  .extend({
    userId: profile.userId.meta({ description: 'The user.' }),
    preferredFraming: profile.preferredFraming.meta({ description: current('framing') }),
    communicationStyle: profile.communicationStyle.meta({ description: current('communication style') }),
    complexityPreference: profile.complexityPreference.meta({ description: current('complexity handling') }),
    encouragementLevel: profile.encouragementLevel.meta({ description: current('encouragement level') }),
    pinned: profile.pinned.meta({ description: 'The fields pinned by PUT, e.g. ["preferredFraming"].' }),
    profilePhase: profile.profilePhase.meta({
      description: 'cold_start: no outcomes yet; established: 10 or more and a clear favourite framing; learning: otherwise.',
    }),
    interactionCount: profile.interactionCount.meta({ description: 'Outcomes applied to this profile.' }),
    lastUpdated: profile.lastUpdated.meta({ description: 'Creation, last applied outcome or last effective PUT (ISO 8601, UTC).' }),
    profileVersion: profile.profileVersion.meta({
      description: 'v0 at creation, one more for every applied outcome and every effective PUT.',
    }),
  })
  .meta({
    id: 'Profile',
    description: 'Current choice per dimension (the pinned value if pinned, else the learned best), pins, phase and version.',
  });

export const profileVersionSchema = z
  .object({
    profileVersion: z
      .string()
      .regex(/^v\d+$/)
      .meta({ description: 'The version this change made.' }),
    cause: z.enum(['outcome', 'manual', 'reset']).meta({
      description:
        'outcome: an applied outcome; manual: an effective PUT; reset: reserved for a reset of the learned state (none recorded today).',
    }),
    changed: z.array(z.string()).meta({
      description: `Profile fields whose value differs from the previous version, among ${changeableFieldSchema.options.join(', ')}.`,
    }),
    createdAt: z.iso.datetime().meta({ description: 'When (ISO 8601, UTC).' }),
  })
  .meta({ id: 'ProfileVersion', description: 'One change of the profile.' });

export const versionsPageSchema = z
  .object({
    data: z.array(profileVersionSchema).meta({ description: 'Newest first; the creation of the profile (v0) has no entry.' }),
    hasMore: z.boolean().meta({ description: 'Next page: ?before=<profileVersion of the last entry>.' }),
  })
  .meta({ id: 'VersionsPage', description: "A page of a profile's versions." });
export type VersionsPage = z.infer<typeof versionsPageSchema>;

const fieldErrorsDetails = z.object({
  fields: z
    .array(
      z
        .object({
          field: z.string().meta({ description: 'Dotted path of the field; "(body)": the whole body; "(request)": the whole request.' }),
          message: z.string().meta({ description: 'What is wrong with it.' }),
          allowed: z.array(z.string()).optional().meta({ description: 'The allowed values of a field with a fixed value set.' }),
        })
        .meta({ id: 'FieldError', description: 'One invalid field.' }),
    )
    .min(1)
    .meta({ description: 'Every invalid field; the one that chose the code first.' }),
});

/** What the API's request log accepts as a client's X-Request-Id; else it gives a UUID, which matches too. */
export const TRACE_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

const bytesLimit = (what: string) =>
  z
    .number()
    .int()
    .meta({ description: `The most bytes the ${what} may take.` });

const DETAILS_DESCRIPTION = 'More about the error, in the shape its code defines.';

/** `details` per code: `always` when every error with that code carries them. */
const ERROR_DETAILS: { [C in ErrorCode]?: { schema: z.ZodType; always: boolean } } = {
  INVALID_USER_ID: { schema: fieldErrorsDetails, always: false },
  INVALID_REQUEST_ID: { schema: fieldErrorsDetails, always: false },
  VALIDATION_ERROR: { schema: fieldErrorsDetails, always: true },
  FORBIDDEN: {
    schema: z.object({ requiredScope: scopeSchema.meta({ description: 'The scope the endpoint needs.' }) }),
    always: true,
  },
  OUTCOME_WINDOW_CLOSED: {
    schema: z.object({
      issuedAt: z.iso.datetime().meta({ description: 'When the context call issued the requestId.' }),
      windowSeconds: z.number().int().min(0).meta({ description: 'How long after that an outcome is accepted.' }),
    }),
    always: true,
  },
  PAYLOAD_TOO_LARGE: { schema: z.object({ limit: bytesLimit('body (or its chunk extensions)') }), always: true },
  HEADERS_TOO_LARGE: { schema: z.object({ limit: bytesLimit('request line and headers') }), always: true },
  RATE_LIMIT_EXCEEDED: {
    schema: z.object({
      limit: z.number().int().meta({ description: 'The per-second limit, or the monthly quota.' }),
      window: z
        .string()
        .regex(/^\d+s$/)
        .meta({ description: 'The window the limit counts in: "1s", or the seconds of the current month.' }),
      retryAfter: z.number().int().min(0).meta({ description: 'Seconds until a request would be admitted; as Retry-After.' }),
      scope: z.enum(['second', 'month']).meta({ description: "second: the key's per-second limit; month: the account's quota." }),
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
      error: z
        .object({
          code: z.literal(code).meta({ description: 'What went wrong, for a client to decide on.' }),
          message: z.string().meta({ description: 'What went wrong, for people; the wording may change.' }),
          statusCode: z.literal(ERROR_STATUS[code]).meta({ description: "The response's HTTP status." }),
          traceId: z.string().regex(TRACE_ID_PATTERN).meta({
            description:
              "The response's X-Request-Id header, under which the service logs the request: quote it when reporting a problem. Not a decision's requestId.",
          }),
          docUrl: z.literal(errorDocUrl(code)).meta({
            description: "Where this code is explained: its section of the API reference (GET /docs), relative to the API's address.",
          }),
          ...(details
            ? { details: (details.always ? details.schema : details.schema.optional()).meta({ description: DETAILS_DESCRIPTION }) }
            : {}),
        })
        .meta({ description: 'The error. Every code has these fields; some have details.' }),
    })
    .meta({ id: errorSchemaId(code), description: ERROR_DOCS[code].when });
}

/** The error envelope, one schema per code (a code's status and details are fixed). */
export const ERROR_SCHEMAS = Object.fromEntries(
  (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => [code, errorSchema(code)]),
) as Record<ErrorCode, ReturnType<typeof errorSchema>>;
