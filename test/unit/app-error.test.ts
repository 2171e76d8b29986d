import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AppError, ERROR_STATUS, errorAnchor, errorDocUrl, isAppError, type ErrorCode } from '../../shared/errors/app-error';

/** The error table of docs/API.md, transcribed. */
const DOCUMENTED_STATUS: Record<ErrorCode, number> = {
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
};

const API_MD = readFileSync(path.join(__dirname, '../../docs/API.md'), 'utf8');

describe('AppError', () => {
  it('knows exactly the documented codes', () => {
    expect(Object.keys(ERROR_STATUS).sort()).toEqual(Object.keys(DOCUMENTED_STATUS).sort());
  });

  it.each(Object.entries(DOCUMENTED_STATUS))('maps %s to HTTP %d', (code, status) => {
    const error = new AppError(code as ErrorCode, 'message');
    expect(error.statusCode).toBe(status);
    expect(error.code).toBe(code);
    expect(error).toBeInstanceOf(Error);
    expect(isAppError(error)).toBe(true);
  });

  it('renders the documented body without details when there are none', () => {
    const body = new AppError('USER_NOT_FOUND', 'No such user').toBody('trace-1');
    expect(body).toEqual({
      error: { code: 'USER_NOT_FOUND', message: 'No such user', statusCode: 404, traceId: 'trace-1', docUrl: '/docs#error-user_not_found' },
    });
    expect('details' in body.error).toBe(false);
  });

  it('renders details when given', () => {
    const details = { fields: [{ field: 'complexity', message: 'must be one of: low, medium, high', allowed: ['low', 'medium', 'high'] }] };
    expect(new AppError('VALIDATION_ERROR', 'Invalid request', details).toBody('trace-2')).toEqual({
      error: {
        code: 'VALIDATION_ERROR',
        message: 'Invalid request',
        statusCode: 400,
        traceId: 'trace-2',
        docUrl: '/docs#error-validation_error',
        details,
      },
    });
  });

  it.each(Object.keys(DOCUMENTED_STATUS))('links %s to its own anchor in docs/API.md', (code) => {
    const anchor = errorAnchor(code as ErrorCode);
    expect(errorDocUrl(code as ErrorCode)).toBe(`/docs#${anchor}`);
    // The anchor sits in the code's row of the error table, next to the code itself.
    const row = API_MD.split('\n').find((line) => line.includes(`<a id="${anchor}"></a>`));
    expect(row).toMatch(new RegExp(`^\\| ${DOCUMENTED_STATUS[code as ErrorCode]} \\| <a id="${anchor}"></a>\`${code}\` \\|`));
  });

  it('is not confused with plain errors', () => {
    expect(isAppError(new Error('x'))).toBe(false);
    expect(isAppError({ code: 'NOT_FOUND', statusCode: 404 })).toBe(false);
  });
});
