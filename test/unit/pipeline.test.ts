import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { pipeline } from '../../api/http';

/** A route's steps as one handler: order, errors thrown or rejected, and what runs before an error is answered. */
const req = {} as Request;
const res = {} as Response;

function run(handler: RequestHandler): Promise<unknown> {
  return new Promise((resolve) => {
    const next: NextFunction = (error?: unknown) => resolve(error ?? 'fell through');
    void handler(req, res, next);
  });
}

describe('pipeline', () => {
  it('runs the steps in order, each on the previous one calling next()', async () => {
    const order: number[] = [];
    const step =
      (n: number): RequestHandler =>
      (_req, _res, next) => {
        order.push(n);
        next();
      };
    await expect(run(pipeline([step(1), step(2), step(3)]))).resolves.toBe('fell through');
    expect(order).toEqual([1, 2, 3]);
  });

  it('hands a thrown error, a rejected step and next(error) to Express, and stops there', async () => {
    const boom = new Error('boom');
    const after = jest.fn();
    const thrown: RequestHandler = () => {
      throw boom;
    };
    const rejected: RequestHandler = async () => Promise.reject(boom);
    const passed: RequestHandler = (_req, _res, next) => next(boom);
    for (const failing of [thrown, rejected, passed]) await expect(run(pipeline([failing, after]))).resolves.toBe(boom);
    expect(after).not.toHaveBeenCalled();
  });

  it('finishes what is pending before an error is answered, and answers its failure instead when it fails', async () => {
    const invalid = new Error('invalid body');
    const refused = new Error('429');
    const failing: RequestHandler = () => {
      throw invalid;
    };
    let settled = false;
    const settle = () =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          settled = true;
          resolve();
        }, 5),
      );
    await expect(run(pipeline([failing], settle))).resolves.toBe(invalid);
    expect(settled).toBe(true);
    await expect(run(pipeline([failing], () => Promise.reject(refused)))).resolves.toBe(refused);
    await expect(run(pipeline([failing], () => undefined))).resolves.toBe(invalid);
  });
});
