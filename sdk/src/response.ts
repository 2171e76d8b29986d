import { CosError, type ErrorDetails } from './errors';
import type { RateLimit } from './rate-limit';
import { parseRetryAfter } from './retry';

interface ErrorBody {
  error: { code: string; message: string; traceId?: unknown; docUrl?: unknown; details?: ErrorDetails };
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error = value.error;
  return (
    typeof error === 'object' &&
    error !== null &&
    'code' in error &&
    typeof error.code === 'string' &&
    /^[A-Z][A-Z0-9_]*$/.test(error.code) &&
    'message' in error &&
    typeof error.message === 'string'
  );
}

/** Fields a newer or older service may leave out are read only when they hold text. */
function nonEmptyString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** What one HTTP attempt received, with the headers the client reports. */
export interface Received {
  statusCode: number;
  headers: Headers;
  text: string;
  requestId?: string | undefined;
  rateLimit?: RateLimit | undefined;
  attempt: number;
  /** The `Idempotency-Key` the attempt sent (POST calls). */
  idempotencyKey?: string | undefined;
}

/** The service's error envelope as a CosError (its code kept, known or not); anything else as UNEXPECTED_RESPONSE. */
export function errorFromResponse(received: Received): CosError {
  const parsed = parseJson(received.text);
  const body = parsed.ok && isErrorBody(parsed.value) ? parsed.value.error : undefined;
  const retryAfter = parseRetryAfter(received.headers.get('retry-after')) ?? body?.details?.retryAfter;
  return new CosError({
    code: body?.code ?? 'UNEXPECTED_RESPONSE',
    message: body?.message ?? `Unexpected HTTP ${received.statusCode} answer from the service`,
    statusCode: received.statusCode,
    details: body?.details,
    requestId: received.requestId,
    traceId: nonEmptyString(body?.traceId) ?? received.requestId,
    docUrl: nonEmptyString(body?.docUrl),
    retryAfter,
    rateLimit: received.rateLimit,
    attempts: received.attempt,
    idempotencyKey: received.idempotencyKey,
  });
}

/**
 * A success's JSON body (undefined for 204). The types are the service's contract; the body is
 * not validated again here.
 */
export function successBody<T>(received: Received): T {
  if (received.statusCode === 204 || received.text === '') return undefined as T;
  const parsed = parseJson(received.text);
  if (parsed.ok) return parsed.value as T;
  throw new CosError({
    code: 'UNEXPECTED_RESPONSE',
    message: `HTTP ${received.statusCode} answer from the service is not JSON`,
    statusCode: received.statusCode,
    requestId: received.requestId,
    traceId: received.requestId,
    rateLimit: received.rateLimit,
    attempts: received.attempt,
    idempotencyKey: received.idempotencyKey,
  });
}
