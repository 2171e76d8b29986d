/** Every error code (docs/API.md) with its HTTP status, in one place. */
export const ERROR_STATUS = {
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

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The page where every code has its own section: the API reference the API serves at GET /docs
 * (docs/API.md carries the same anchors). Relative to the API's address, so one value is right
 * for every deployment, whatever its public URL.
 */
export const ERROR_DOCS_PAGE = '/docs';

/** A code's anchor on that page and in docs/API.md: `OUTCOME_CONFLICT` → `error-outcome_conflict`. */
export const errorAnchor = (code: ErrorCode): string => `error-${code.toLowerCase()}`;

/** Each code's `docUrl`, made once: error bodies reuse the strings. */
const DOC_URLS = Object.fromEntries(
  (Object.keys(ERROR_STATUS) as ErrorCode[]).map((code) => [code, `${ERROR_DOCS_PAGE}#${errorAnchor(code)}`]),
) as Record<ErrorCode, string>;

export const errorDocUrl = (code: ErrorCode): string => DOC_URLS[code];

/** Every error response's body (docs/API.md, Errors). */
export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    statusCode: number;
    /** The response's X-Request-Id. */
    traceId: string;
    docUrl: string;
    details?: Record<string, unknown>;
  };
}

export interface FieldError {
  field: string;
  message: string;
  allowed?: readonly string[];
}

export class AppError extends Error {
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    /** Extra response headers (e.g. Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = ERROR_STATUS[code];
  }

  /** The response body; `traceId` must be the X-Request-Id header the same response carries. */
  toBody(traceId: string): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        statusCode: this.statusCode,
        traceId,
        docUrl: DOC_URLS[this.code],
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError;
