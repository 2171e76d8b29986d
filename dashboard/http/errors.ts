import type { NextFunction, Request, Response } from 'express';
import { AppError, isAppError } from '../../shared/errors/app-error';
import { isDependencyUnavailable, serviceUnavailable } from '../../shared/errors/unavailable';
import { KeyNotFoundError } from '../../shared/keys/key.service';
import type { Logger } from '../../shared/logger/logger';
import { errorPage } from '../views/error.view';
import { fromFormParserError } from './form';

function toAppError(error: unknown, logger: Logger): AppError {
  if (isAppError(error)) return error;
  // The router could not decode a parameter of the path (e.g. /keys/%E0%A4%A): the client's mistake.
  if (error instanceof URIError)
    return new AppError('VALIDATION_ERROR', 'The address is not valid: its percent-encoding cannot be decoded');
  if (error instanceof KeyNotFoundError) return new AppError('NOT_FOUND', 'No active key with that id in this account');
  const parser = fromFormParserError(error);
  if (parser) return parser;
  if (isDependencyUnavailable(error)) {
    logger.warn({ err: error }, 'dependency unavailable');
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
  (logger: Logger) =>
  (error: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const appError = toAppError(error, logger);
    if (res.headersSent) return;
    for (const [name, value] of Object.entries(appError.headers ?? {})) res.setHeader(name, value);
    const viewer = res.locals.viewer;
    res.setHeader('Cache-Control', 'no-store');
    res.status(appError.statusCode).format({
      html: () => res.send(errorPage(appError, viewer)),
      default: () => res.json(appError.toBody()),
    });
  };

export const notFound = (req: Request, _res: Response, next: NextFunction) =>
  next(new AppError('NOT_FOUND', `No page at ${req.method} ${req.path}`));
