import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { deferredAdmission } from './rate-limit.middleware';

/**
 * The steps of one route run as a single Express handler: each step's `next()` calls the
 * following step directly, `next(error)` (or a rejected promise) hands the error to Express.
 * The same order and error handling as listing the steps on the route, without the router's
 * per-layer dispatch on every request (docs/adr/0016-hot-path.md). A live request whose limit
 * the route deferred to its first read is limited before an error is passed on: a refusal
 * (429) comes before the body's errors, as on every other route.
 */
export function pipeline(steps: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    let index = 0;
    const fail = (error: unknown): void => {
      const admission = deferredAdmission(res);
      if (!admission?.pending) return next(error);
      admission.alone().then(() => next(error), next);
    };
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return fail(error);
      const handler = steps[index++];
      if (!handler) return next();
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.catch(fail);
      } catch (thrown) {
        fail(thrown);
      }
    };
    step();
  };
}
