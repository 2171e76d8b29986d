import type { NextFunction, Request, Response } from 'express';
import { AppError, isAppError } from '../../shared/errors/app-error';
import { isDependencyUnavailable, serviceUnavailable } from '../../shared/errors/unavailable';
import { KeyNotFoundError } from '../../shared/credentials/key.service';
import type { Logger } from '../../shared/logger/logger';
import { errorPage } from '../views/error.view';
import type { DependencyWatch } from '../../shared/health/dependency-watch';
import { passedDeadline, RequestDeadlines } from '../../shared/http/request-deadlines';
import { traceIdOf } from '../../shared/http/trace-id';
import { performance } from 'node:perf_hooks';
import { fromFormParserError } from './form';

function toAppError(error: unknown, logger: Logger, watch: DependencyWatch): AppError {
  if (isAppError(error)) return error;
  // The router could not decode a parameter of the path (e.g. /keys/%E0%A4%A): the client's mistake.
  if (error instanceof URIError)
    return new AppError('VALIDATION_ERROR', 'The address is not valid: its percent-encoding cannot be decoded');
  if (error instanceof KeyNotFoundError) return new AppError('NOT_FOUND', 'No active key with that id in this account');
  const parser = fromFormParserError(error);
  if (parser) return parser;
  // Logged by the watch, once per outage.
  if (isDependencyUnavailable(error)) {
    void watch.failed(error);
    return serviceUnavailable();
  }
  logger.error({ err: error }, 'unhandled error');
  return new AppError('INTERNAL_ERROR', 'Something went wrong on our side');
}

/**
 * The dashboard's only place that turns errors into responses: a page for browsers, the
 * service's error envelope for clients asking for JSON. Never a stack trace.
 */
export const dashboardErrorHandler =
  (logger: Logger, watch: DependencyWatch) =>
  (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    // Answered 503 at its deadline: what its handler failed with afterwards is no news.
    if (passedDeadline(res)) return;
    const appError = toAppError(error, logger, watch);
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(appError.headers ?? {})) res.setHeader(name, value);
    const viewer = res.locals.viewer;
    res.setHeader('Cache-Control', 'no-store');
    res.status(appError.statusCode).format({
      html: () => res.send(errorPage(appError, viewer)),
      default: () => res.json(appError.toBody(traceIdOf(res))),
    });
  };

/**
 * Gives every page the request deadline (docs/adr/0018-deadlines.md): one not answered in time
 * gets the 503 page, and what its handler does afterwards is dropped.
 */
export function pageDeadlines(
  deadlineMs: number,
  onError: ReturnType<typeof dashboardErrorHandler>,
  watch: Pick<DependencyWatch, 'failed'>,
) {
  const deadlines = new RequestDeadlines<Response>(deadlineMs, (res) => {
    void watch.failed(new Error('a page passed its deadline'));
    onError(
      new AppError('SERVICE_UNAVAILABLE', 'The page did not load within its deadline; retry shortly', undefined, { 'Retry-After': '1' }),
      res.req,
      res,
      () => undefined,
    );
  });
  const middleware = (_req: Request, res: Response, next: NextFunction): void => {
    deadlines.start(res, performance.now());
    res.once('finish', () => deadlines.end(res));
    next();
  };
  return { middleware, close: () => deadlines.close() };
}

export const notFound = (req: Request, _res: Response, next: NextFunction) =>
  next(new AppError('NOT_FOUND', `No page at ${req.method} ${req.path}`));
