import type { z } from 'zod';
import type { ErrorCode } from '../../shared/errors/app-error';
import type { RouteName } from '../routes/v1.routes';
import { contextRequestSchema, outcomeRequestSchema, profileUpdateSchema, versionsQuerySchema } from '../schemas/request.schemas';
import { contextResponseSchema, outcomeAcceptedSchema, profileSchema, versionsPageSchema } from '../schemas/response.schemas';

export interface OperationDoc {
  summary: string;
  description: string;
  tag: 'Context' | 'Outcomes' | 'Profiles';
  body?: { schema: z.ZodType; example: unknown };
  query?: z.ZodObject;
  /** The success answer: its body's schema and an example, required unless it has no body (204). */
  success: { status: 200 | 202; description: string; schema: z.ZodType; example: unknown } | { status: 204; description: string };
  /**
   * Codes of the operation's own checks. Those of authentication, rate limiting, the body
   * (POST and PUT) and the path userId are added for every route that has them.
   */
  errors: ErrorCode[];
}

const PROFILE_EXAMPLE = {
  userId: 'user-1',
  preferredFraming: 'micro_steps',
  communicationStyle: 'direct',
  complexityPreference: 'whole',
  encouragementLevel: 'moderate',
  pinned: ['preferredFraming', 'encouragementLevel'],
  profilePhase: 'learning',
  interactionCount: 1,
  lastUpdated: '2026-11-22T01:18:03.427Z',
  profileVersion: 'v2',
};

/** What the document says about each /v1 route, beyond what the route table and schemas give. */
export const OPERATIONS: Record<RouteName, OperationDoc> = {
  context: {
    tag: 'Context',
    summary: 'Decide how to present a task to a user',
    description:
      'Returns the presentation to use for this user and task. An unknown user is created in cold_start. The decision is enqueued before the response is sent; if it cannot be, the answer is 503 and no requestId is issued.',
    body: {
      schema: contextRequestSchema,
      example: { userId: 'user-1', task: 'Plan the week', complexity: 'low', taskType: 'planning' },
    },
    success: {
      status: 200,
      description: 'The recommended presentation',
      schema: contextResponseSchema,
      example: {
        requestId: 'req_AQABogDU6wgi4MhcLbvHktugbs1hY2N0X055dHVFRUV2WHRGUzZxd0J-aDRppTkw7InrPZx0Yyme',
        suggestedFraming: 'micro_steps',
        communicationStyle: 'direct',
        complexity: 'whole',
        encouragement: 'moderate',
        confidence: 0.1024,
        rationale: 'No outcomes from this user yet, so this follows the population. Framing (micro_steps) is pinned by the app.',
        metadata: { profilePhase: 'learning', interactionCount: 1, explorationMode: false },
      },
    },
    errors: ['INVALID_USER_ID', 'VALIDATION_ERROR', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_KEY_IN_USE'],
  },
  outcome: {
    tag: 'Outcomes',
    summary: 'Report what happened after a context call',
    description:
      'Applied to the user and choice of the context call that issued the requestId. A retry with the same signals is accepted again and applied once; metadata is stored, not used for learning.',
    body: {
      schema: outcomeRequestSchema,
      example: {
        requestId: 'req_AQABogDU6wgi4MhcLbvHktugbs1hY2N0X055dHVFRUV2WHRGUzZxd0J-aDRppTkw7InrPZx0Yyme',
        started: true,
        completed: true,
        timeToStart: 90,
        flowState: true,
        satisfaction: 0.8,
      },
    },
    success: {
      status: 202,
      description: 'Accepted: the outcome is durably enqueued',
      schema: outcomeAcceptedSchema,
      example: { success: true, message: 'Outcome accepted; it will be applied to the profile shortly' },
    },
    errors: [
      'INVALID_REQUEST_ID',
      'VALIDATION_ERROR',
      'REQUEST_NOT_FOUND',
      'OUTCOME_CONFLICT',
      'OUTCOME_WINDOW_CLOSED',
      'IDEMPOTENCY_KEY_REUSED',
      'IDEMPOTENCY_KEY_IN_USE',
    ],
  },
  'profile.get': {
    tag: 'Profiles',
    summary: "Read a user's profile",
    description: 'Read from the cache, on a miss from the database.',
    success: { status: 200, description: 'The profile', schema: profileSchema, example: PROFILE_EXAMPLE },
    errors: ['USER_NOT_FOUND'],
  },
  'profile.update': {
    tag: 'Profiles',
    summary: 'Pin or unpin dimensions',
    description:
      'A value pins the dimension (context calls return it); null unpins it. At least one field. Creates the profile when missing. A change of pins bumps profileVersion by one and records a manual version; a no-op does not.',
    body: { schema: profileUpdateSchema, example: { preferredFraming: 'micro_steps', encouragementLevel: 'moderate' } },
    success: { status: 200, description: 'The full profile after the change', schema: profileSchema, example: PROFILE_EXAMPLE },
    errors: ['VALIDATION_ERROR'],
  },
  'profile.delete': {
    tag: 'Profiles',
    summary: 'Erase a user (right to erasure)',
    description:
      "Deletes the user's profile, version history, decisions and outcomes; queued decisions and outcomes for the user are dropped. Idempotent: also 204 when the user never existed.",
    success: { status: 204, description: 'Erased; no body' },
    errors: [],
  },
  'profile.versions': {
    tag: 'Profiles',
    summary: "List a profile's versions, newest first",
    description: 'One entry per applied outcome and effective PUT. Unknown query parameters are a VALIDATION_ERROR.',
    query: versionsQuerySchema,
    success: {
      status: 200,
      description: 'A page of versions',
      schema: versionsPageSchema,
      example: {
        data: [
          { profileVersion: 'v2', cause: 'manual', changed: ['encouragementLevel', 'pinned'], createdAt: '2026-11-22T01:18:03.427Z' },
          {
            profileVersion: 'v1',
            cause: 'outcome',
            changed: ['complexityPreference', 'interactionCount'],
            createdAt: '2026-11-22T01:18:02.351Z',
          },
        ],
        hasMore: false,
      },
    },
    errors: ['VALIDATION_ERROR', 'USER_NOT_FOUND'],
  },
};
