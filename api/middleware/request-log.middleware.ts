import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../../shared/logger/logger';
import type { RequestObserver } from './metrics.middleware';
import type { RequestDeadlines } from '../../shared/http/request-deadlines';

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export interface RequestLogOptions {
  /** Share of successful requests logged at info (the rest at debug). */
  sampleRate: number;
  /** Requests slower than this (ms) are logged at warn. */
  slowMs: number;
}

export const DEFAULT_REQUEST_LOG: RequestLogOptions = { sampleRate: 0.01, slowMs: 1000 };

/** What the access log writes with: read once, when the middleware is made. */
export interface RequestLogDeps {
  logger: Logger;
  /** The same timing, for the metrics histogram (and traffic recording). */
  observe: RequestObserver;
  deadlines?: RequestDeadlines<Response>;
  options?: RequestLogOptions;
}

/** The request id of this request (the client's X-Request-Id when well-formed). */
export const requestIdOf = (res: Response): string => res.locals.requestId as string;

/**
 * Gives every request its X-Request-Id and its deadline, and writes the access log: server
 * errors always — except a 503, at debug: the dependency watch logs the outage that causes
 * them once, not once per request — client errors at info, slow requests at warn, a sample of
 * successes at info. One
 * line per request at most, from the process's logger — no per-request child logger, which costs more than a
 * cached context call's own work. The same timing goes to `observe` (the metrics histogram).
 */
export function requestLog({ logger, observe, deadlines, options = DEFAULT_REQUEST_LOG }: RequestLogDeps) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
    res.locals.requestId = id;
    res.setHeader('X-Request-Id', id);
    const start = performance.now();
    deadlines?.start(res, start);
    res.once('finish', () => {
      deadlines?.end(res);
      const ms = performance.now() - start;
      const status = res.statusCode;
      observe(res, ms);
      // A 503 is a dependency being away, not a fault of this process.
      const level =
        status === 503
          ? 'debug'
          : status >= 500
            ? 'error'
            : ms >= options.slowMs
              ? 'warn'
              : status >= 400 || Math.random() < options.sampleRate
                ? 'info'
                : 'debug';
      if (!logger.isLevelEnabled(level)) return;
      logger[level]({ reqId: id, method: req.method, path: req.path, status, ms: Math.round(ms * 100) / 100 }, 'request completed');
    });
    next();
  };
}
