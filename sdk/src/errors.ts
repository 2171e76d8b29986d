import type { RateLimit } from './rate-limit';

/** Every error code the service answers with, by HTTP status. */
export const ERROR_CODES = {
  INVALID_USER_ID: 400,
  INVALID_REQUEST_ID: 400,
  INVALID_JSON: 400,
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  ACCOUNT_RESTRICTED: 403,
  NOT_FOUND: 404,
  REQUEST_NOT_FOUND: 404,
  USER_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  OUTCOME_CONFLICT: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  OUTCOME_WINDOW_CLOSED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMIT_EXCEEDED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * `UNEXPECTED_RESPONSE`: the answer was not the service's JSON (for example an HTML error page
 * from a proxy in front of it); `statusCode` is still the answer's status. A code this version
 * of the SDK does not know (a newer service) is kept as the service sent it.
 */
export type CosErrorCode = ErrorCode | 'UNEXPECTED_RESPONSE' | (string & Record<never, never>);

export interface FieldError {
  field: string;
  message: string;
  /** The allowed values, for fields with a fixed value set. */
  allowed?: string[];
}

/** `details` of an error body; which fields are present depends on the code. */
export interface ErrorDetails {
  /** VALIDATION_ERROR, INVALID_USER_ID, INVALID_REQUEST_ID. */
  fields?: FieldError[];
  /** RATE_LIMIT_EXCEEDED (the limit), PAYLOAD_TOO_LARGE and HEADERS_TOO_LARGE (bytes). */
  limit?: number;
  window?: string;
  retryAfter?: number;
  scope?: 'second' | 'month';
  /** FORBIDDEN. */
  requiredScope?: string;
  /** OUTCOME_WINDOW_CLOSED. */
  issuedAt?: string;
  windowSeconds?: number;
  [key: string]: unknown;
}

export interface CosErrorInit {
  code: CosErrorCode;
  message: string;
  statusCode: number;
  details?: ErrorDetails | undefined;
  requestId?: string | undefined;
  traceId?: string | undefined;
  docUrl?: string | undefined;
  retryAfter?: number | undefined;
  rateLimit?: RateLimit | undefined;
  attempts: number;
  idempotencyKey?: string | undefined;
}

/**
 * The service answered with an error (after any retries), or the SDK refused a call it could not
 * send faithfully: then `statusCode` is 0 and `attempts` 0.
 */
export class CosError extends Error {
  readonly code: CosErrorCode;
  readonly statusCode: number;
  readonly details?: ErrorDetails | undefined;
  /** The response's `X-Request-Id`, to find the request in the service's logs. */
  readonly requestId?: string | undefined;
  /**
   * The error body's `traceId`: the `X-Request-Id` of the HTTP exchange that answered it, to
   * quote to support. Taken from the response's `X-Request-Id` when the body has none.
   */
  readonly traceId?: string | undefined;
  /** A link to this code's section of the API reference, when the service sent one. */
  readonly docUrl?: string | undefined;
  /** Seconds the service asked to wait (`Retry-After`), on 429 and 503. */
  readonly retryAfter?: number | undefined;
  /** The key's rate-limit state (live keys). */
  readonly rateLimit?: RateLimit | undefined;
  /** HTTP attempts made, retries included. */
  readonly attempts: number;
  /**
   * The `Idempotency-Key` the call sent (POST calls): the same call made again with this key is
   * the same request, run at most once.
   */
  readonly idempotencyKey?: string | undefined;

  constructor(init: CosErrorInit) {
    super(init.message);
    this.name = 'CosError';
    this.code = init.code;
    this.statusCode = init.statusCode;
    this.details = init.details;
    this.requestId = init.requestId;
    this.traceId = init.traceId;
    this.docUrl = init.docUrl;
    this.retryAfter = init.retryAfter;
    this.rateLimit = init.rateLimit;
    this.attempts = init.attempts;
    this.idempotencyKey = init.idempotencyKey;
  }
}

/** No answer from the service: the connection failed or an attempt timed out (after any retries). */
export class CosConnectionError extends Error {
  readonly timedOut: boolean;
  readonly attempts: number;
  /**
   * The `Idempotency-Key` the call sent (POST calls). An attempt may have reached the service
   * before the connection failed: making the call again with this key cannot run it twice.
   */
  readonly idempotencyKey?: string | undefined;

  constructor(message: string, options: { timedOut: boolean; attempts: number; cause?: unknown; idempotencyKey?: string | undefined }) {
    super(message, { cause: options.cause });
    this.name = 'CosConnectionError';
    this.timedOut = options.timedOut;
    this.attempts = options.attempts;
    this.idempotencyKey = options.idempotencyKey;
  }
}
