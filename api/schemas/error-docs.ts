import type { ErrorCode } from '../../shared/errors/app-error';

export interface ErrorDoc {
  /** When the code is emitted (docs/API.md, Errors). */
  when: string;
  /** An example error body's message and details. */
  example: { message: string; details?: Record<string, unknown> };
}

const fields = (field: string, message: string, allowed?: string[]) => ({ fields: [{ field, message, ...(allowed ? { allowed } : {}) }] });

/** Every error code's meaning and an example, for the OpenAPI document and /docs. */
export const ERROR_DOCS: Record<ErrorCode, ErrorDoc> = {
  INVALID_USER_ID: {
    when: 'userId (body or path) missing, not a string, empty, over 256 characters, with control characters or unpaired surrogates, or a path userId that is not valid percent-encoded UTF-8 (the last without details, before authentication).',
    example: { message: 'userId must be 1 to 256 characters', details: fields('userId', 'must be 1 to 256 characters') },
  },
  INVALID_REQUEST_ID: {
    when: 'Outcome requestId missing, not a string or not in the req_… format; reported before other field errors, which details.fields still lists.',
    example: {
      message: 'requestId must be a requestId returned by POST /v1/context (req_…)',
      details: fields('requestId', 'must be a requestId returned by POST /v1/context (req_…)'),
    },
  },
  INVALID_JSON: {
    when: 'The body is not valid JSON, not valid UTF-8, arrived incomplete, or has a Content-Encoding that does not decode.',
    example: { message: 'Request body is not valid JSON' },
  },
  VALIDATION_ERROR: {
    when: 'Any other invalid field, an unknown field, JSON that is not an object, an empty PUT, an invalid or unknown query parameter; or a request that is not valid HTTP/1.1 (an unknown method, a malformed header), then with the field "(request)" and the connection closed.',
    example: {
      message: 'Invalid request: complexity must be one of: low, medium, high',
      details: fields('complexity', 'must be one of: low, medium, high', ['low', 'medium', 'high']),
    },
  },
  UNAUTHORIZED: {
    when: 'No Authorization: Bearer header; a key not in the cos_sk_<test|live>_<id> format, of an environment this deployment does not serve, unknown, revoked, deleted or expired.',
    example: { message: 'Invalid API key' },
  },
  FORBIDDEN: {
    when: "The key lacks the endpoint's scope.",
    example: { message: 'This key lacks the "profile" scope', details: { requiredScope: 'profile' } },
  },
  ACCOUNT_RESTRICTED: {
    when: "The key's account is restricted.",
    example: { message: 'This account is restricted' },
  },
  NOT_FOUND: {
    when: 'No route for this path (any method), answered before authentication.',
    example: { message: 'No route for GET /v1/nothing-here' },
  },
  REQUEST_NOT_FOUND: {
    when: "The requestId was not issued to this key's account and environment (a made-up id and another tenant's id are answered alike).",
    example: { message: 'No context request with this requestId was issued to this account and environment' },
  },
  USER_NOT_FOUND: {
    when: 'The user has no profile (never seen, or erased).',
    example: { message: 'No profile for user "user-1"' },
  },
  METHOD_NOT_ALLOWED: {
    when: 'A known path with a method it does not serve, answered before authentication; Allow lists the methods.',
    example: { message: 'PATCH is not allowed on /v1/profile/:userId; use GET, PUT, DELETE, HEAD' },
  },
  REQUEST_TIMEOUT: {
    when: 'The request line and headers did not arrive within 10 seconds, or the whole request within 20 seconds; the connection is closed.',
    example: { message: 'The request did not arrive in time: headers within 10 s, the whole request within 20 s' },
  },
  OUTCOME_CONFLICT: {
    when: 'An outcome with different signals was already accepted for this requestId.',
    example: { message: 'A different outcome was already recorded for this requestId' },
  },
  IDEMPOTENCY_KEY_REUSED: {
    when: 'An Idempotency-Key already used within the idempotency window with a different request (another body, path or method).',
    example: { message: 'This Idempotency-Key was already used with a different request' },
  },
  IDEMPOTENCY_KEY_IN_USE: {
    when: 'A request with this Idempotency-Key is still being processed; Retry-After says when to retry.',
    example: { message: 'A request with this Idempotency-Key is still in progress; retry shortly' },
  },
  OUTCOME_WINDOW_CLOSED: {
    when: 'The context call is older than the outcome window (7 days by default).',
    example: {
      message: 'The outcome window for this requestId has closed',
      details: { issuedAt: '2026-11-14T09:30:00.000Z', windowSeconds: 604800 },
    },
  },
  PAYLOAD_TOO_LARGE: {
    when: 'The body is over 65,536 bytes, or its chunk extensions over 16,384 (then the connection is closed).',
    example: { message: 'Request body exceeds 65536 bytes', details: { limit: 65536 } },
  },
  UNSUPPORTED_MEDIA_TYPE: {
    when: 'A body whose Content-Type is not application/json or application/*+json, or with a non-UTF-8 charset or an unsupported Content-Encoding.',
    example: { message: 'Send JSON with Content-Type: application/json' },
  },
  RATE_LIMIT_EXCEEDED: {
    when: 'A live key over its per-second limit (scope second) or monthly quota (scope month); Retry-After says when to retry.',
    example: {
      message: 'Rate limit of 10 requests per second exceeded for this key',
      details: { limit: 10, window: '1s', retryAfter: 1, scope: 'second' },
    },
  },
  HEADERS_TOO_LARGE: {
    when: 'The request line and headers are over 16,384 bytes; the connection is closed.',
    example: { message: 'Request line and headers exceed 16384 bytes', details: { limit: 16384 } },
  },
  INTERNAL_ERROR: {
    when: "An unexpected error; the response's X-Request-Id identifies it in the logs.",
    example: { message: 'Something went wrong on our side; the request id identifies it' },
  },
  SERVICE_UNAVAILABLE: {
    when: 'Redis or Postgres unreachable while handling the request, or the key store unreachable during authentication.',
    example: { message: 'A backing service is unavailable; retry shortly' },
  },
};
