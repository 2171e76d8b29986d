import type { NextFunction, Request, Response } from 'express';
import { AppError, isAppError } from '../../shared/errors/app-error';
import { isDependencyUnavailable, serviceUnavailable } from '../../shared/errors/unavailable';
import type { DependencyWatch } from '../../shared/health/dependency-watch';
import { passedDeadline } from '../../shared/http/request-deadlines';
import { traceIdOf } from '../../shared/http/trace-id';
import { BODY_LIMIT_BYTES } from '../http';
import type { Logger } from '../../shared/logger/logger';
import { requestIdOf } from './request-log.middleware';

/** Body-parser failures carry a `type`; map them to the contract's error codes. */
function fromParserError(error: { type?: string }): AppError | null {
  switch (error.type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${BODY_LIMIT_BYTES} bytes`, { limit: BODY_LIMIT_BYTES });
    case 'entity.parse.failed':
      return new AppError('INVALID_JSON', 'Request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send UTF-8 JSON with Content-Type: application/json');
    case 'request.aborted':
    case 'request.size.invalid':
      return new AppError('INVALID_JSON', 'Request body was incomplete');
    default:
      return null;
  }
}

/**
 * Client errors raised by Express itself: a path that is not valid percent-encoding (only
 * /v1/profile/:userId has a parameter), a body whose Content-Encoding does not decode.
 */
function fromHttpError(error: unknown): AppError | null {
  if (error instanceof URIError) return new AppError('INVALID_USER_ID', 'userId in the path is not valid percent-encoded UTF-8');
  const status =
    (error as { status?: number; statusCode?: number } | null)?.status ?? (error as { statusCode?: number } | null)?.statusCode;
  if (status === 400) return new AppError('INVALID_JSON', 'Request body could not be read as JSON');
  if (status === 413)
    return new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${BODY_LIMIT_BYTES} bytes`, { limit: BODY_LIMIT_BYTES });
  if (status === 415) return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send UTF-8 JSON with Content-Type: application/json');
  return null;
}

/** Answers a request whose deadline passed: 503 with Retry-After. */
export function expireRequest(onError: ReturnType<typeof errorHandler>) {
  return (res: Response): void =>
    onError(
      new AppError('SERVICE_UNAVAILABLE', 'The request did not complete within its deadline; retry shortly', undefined, {
        'Retry-After': '1',
      }),
      res.req,
      res,
      () => undefined,
    );
}

/**
 * The only place that turns errors into responses. Never leaks stack traces. A dependency that
 * did not answer is the dependency watch's to log (once per outage), not each request's.
 */
export const errorHandler =
  (logger: Logger, watch: DependencyWatch) =>
  (error: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    // Answered 503 at its deadline: what its handler failed with afterwards (often that very
    // answer already being sent) is no news.
    if (passedDeadline(res)) return;
    const log = (level: 'warn' | 'error', fields: object, message: string) =>
      logger[level]({ reqId: requestIdOf(res), ...fields }, message);
    let appError = isAppError(error) ? error : (fromParserError((error ?? {}) as { type?: string }) ?? fromHttpError(error));
    if (!appError && isDependencyUnavailable(error)) appError = serviceUnavailable();
    if (appError?.code === 'SERVICE_UNAVAILABLE') void watch.failed(error);
    if (!appError) {
      log('error', { err: error }, 'unhandled error');
      appError = new AppError('INTERNAL_ERROR', 'Something went wrong on our side; the request id identifies it');
    } else if (appError.statusCode >= 500 && appError.code !== 'SERVICE_UNAVAILABLE') {
      log('warn', { code: appError.code }, appError.message);
    }
    if (res.headersSent) return;
    if (appError.code === 'UNAUTHORIZED') res.setHeader('WWW-Authenticate', 'Bearer realm="cos"');
    for (const [name, value] of Object.entries(appError.headers ?? {})) res.setHeader(name, value);
    res.status(appError.statusCode).json(appError.toBody(traceIdOf(res)));
  };
