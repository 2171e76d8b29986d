import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * What a route must finish before an error of its steps is answered, or undefined when nothing
 * is pending (a live request's limit deferred to its first read: its 429 comes first).
 */
export type BeforeError = (res: Response) => Promise<void> | undefined;

/**
 * The steps of one route run as a single Express handler: each step's `next()` calls the
 * following step directly, `next(error)` (or a rejected promise) hands the error to Express.
 * The same order and error handling as listing the steps on the route, without the router's
 * per-layer dispatch on every request (docs/adr/0016-hot-path.md). `beforeError` runs before
 * an error is passed on; if it fails, its failure is the answer.
 */
export function pipeline(steps: RequestHandler[], beforeError?: BeforeError): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    let index = 0;
    const fail = (error: unknown): void => {
      const pending = beforeError?.(res);
      if (!pending) return next(error);
      pending.then(() => next(error), next);
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
