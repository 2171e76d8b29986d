import { IncomingMessage, ServerResponse, type RequestListener, type Server, type ServerOptions } from 'node:http';
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from 'express';
import { AppError } from '../../shared/errors/app-error';
import { pipeline } from './pipeline';

/** The handler of a static path, found by method and exact path (query string ignored); undefined for anything else. */
export type ExactRoutes = (method: string | undefined, url: string | undefined) => RequestHandler | undefined;

/**
 * The routes without path parameters, found by an exact lookup of method and path: a POST to
 * /v1/context or /v1/outcome skips Express's dispatch, the router's pattern matching and the
 * route's own dispatch, which cost more per request than the call's own work
 * (docs/adr/0016-hot-path.md). Anything else — another spelling of the path (a trailing slash,
 * capitals), another method, a parameterised path — is not found here and goes to the app's
 * router, which answers it as before. Each handler runs `before` first (the request log).
 */
export function exactRoutes(
  routes: ReadonlyArray<{ method: string; path: string; run: RequestHandler }>,
  before: RequestHandler,
): ExactRoutes {
  const byMethod = new Map<string, Map<string, RequestHandler>>();
  for (const { method, path, run } of routes) {
    const key = method.toUpperCase();
    byMethod.set(key, (byMethod.get(key) ?? new Map<string, RequestHandler>()).set(path, pipeline([before, run])));
  }
  return (method, url = '') => {
    const query = url.indexOf('?');
    return method === undefined ? undefined : byMethod.get(method)?.get(query < 0 ? url : url.slice(0, query));
  };
}

/** The API's HTTP side: `listener` answers each request; `createServer` makes a server that runs it. */
export interface ApiApp {
  listener: RequestListener;
  createServer(): Server;
  /** Stops the request-deadline timer. */
  close(): void;
}

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
    // A no-op on a server made with `ownMessages`'s options: its messages already have these prototypes.
    const request = Object.setPrototypeOf(req, app.request) as Request;
    const response = Object.setPrototypeOf(res, app.response) as Response;
    request.res = response;
    response.req = request;
    response.locals = Object.create(null) as Response['locals'];
    // The route answers every request it is given; falling through is a bug, answered as the router would.
    route(request, response, (error?: unknown) =>
      onError(error ?? new AppError('NOT_FOUND', `No route for ${request.method} ${request.path}`), request, response, () => undefined),
    );
  };
}

/**
 * The server options that make each request and response with the app's prototypes from the
 * start. Express gives each request and response its own prototype as it dispatches them
 * (`Object.setPrototypeOf`); under load that kept every request's objects alive through two
 * scavenges into V8's old generation — long scavenge pauses and frequent mark-compacts, the
 * API's latency tail (docs/adr/0016-hot-path.md). Here the app's prototypes become the
 * prototypes of the server's own message classes, so that step finds them in place and changes
 * nothing. Call once per app.
 */
export function ownMessages(app: Express): ServerOptions {
  class ApiRequest extends IncomingMessage {}
  class ApiResponse<Req extends IncomingMessage = IncomingMessage> extends ServerResponse<Req> {}
  Object.setPrototypeOf(ApiRequest.prototype, app.request);
  Object.setPrototypeOf(ApiResponse.prototype, app.response);
  Object.defineProperty(app, 'request', { value: ApiRequest.prototype, configurable: true, enumerable: true, writable: true });
  Object.defineProperty(app, 'response', { value: ApiResponse.prototype, configurable: true, enumerable: true, writable: true });
  return { IncomingMessage: ApiRequest, ServerResponse: ApiResponse };
}
