import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * The steps of one route run as a single Express handler: each step's `next()` calls the
 * following step directly, `next(error)` (or a rejected promise) hands the error to Express.
 * The same order and error handling as listing the steps on the route, without the router's
 * per-layer dispatch on every request (docs/adr/0016-hot-path.md).
 */
export function pipeline(steps: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error !== undefined && error !== null) return next(error);
      const handler = steps[index++];
      if (!handler) return next();
      try {
        const result: unknown = handler(req, res, step);
        if (result instanceof Promise) result.catch(next);
      } catch (thrown) {
        next(thrown);
      }
    };
    step();
  };
}
