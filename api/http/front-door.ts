import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from 'express';
import { AppError } from '../../shared/errors/app-error';

/** The handler of a static path, found by method and exact path (query string ignored); undefined for anything else. */
export type ExactRoutes = (method: string | undefined, url: string | undefined) => RequestHandler | undefined;

/**
 * What the HTTP server runs: a request for a static path is answered by its handler directly,
 * everything else by the Express app. Express's dispatch (its final handler, the router's
 * per-request state and layer matching) cost a context call more than the route's own steps
 * (docs/adr/0016-hot-path.md), so a static path gets only what Express's own dispatch gives
 * every request and the handlers use: the app's request and response prototypes, the circular
 * references and `res.locals`. An error goes to the app's error handler, as through the router.
 */
export function frontDoor(app: Express, exact: ExactRoutes, onError: ErrorRequestHandler): RequestListener {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const route = exact(req.method, req.url);
    if (route === undefined) return void app(req, res);
    const request = Object.setPrototypeOf(req, app.request) as Request;
    const response = Object.setPrototypeOf(res, app.response) as Response;
    request.res = response;
    response.req = request;
    response.locals = Object.create(null) as Response['locals'];
    // The route answers every request it is given; falling through is a bug, answered as the router would.
    const fallThrough = () => new AppError('NOT_FOUND', `No route for ${request.method} ${request.path}`);
    route(request, response, (error?: unknown) => onError(error ?? fallThrough(), request, response, () => undefined));
  };
}
