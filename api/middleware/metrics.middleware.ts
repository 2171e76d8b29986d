import type { RequestHandler, Response } from 'express';
import type { ApiMetrics } from '../../shared/metrics/metrics';

/** The `route` label of requests that reached no named route (404, 405, OPTIONS). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Receives each request's duration once its response has been sent. */
export type RequestObserver = (res: Response, ms: number) => void;

/**
 * Feeds the duration histogram from the access log's timing (request-log.middleware.ts), so a
 * request costs one pair of clock reads and one observation, labelled by route name and status.
 */
export function requestObserver(metrics: ApiMetrics): RequestObserver {
  return (res, ms) => metrics.observeRequest((res.locals.route as string | undefined) ?? UNMATCHED_ROUTE, res.statusCode, ms / 1000);
}

/** Names the route a request matched (`route` label): a fixed name, never the raw path. */
export function routeName(name: string): RequestHandler {
  return (_req, res, next) => {
    res.locals.route = name;
    next();
  };
}
