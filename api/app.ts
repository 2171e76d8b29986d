import { createServer } from 'node:http';
import express, { type Response } from 'express';
import type { Logger } from '../shared/logger/logger';
import { AppError } from '../shared/errors/app-error';
import { answerClientErrors, serverOptions } from '../shared/http/client-errors';
import { errorHandler, expireRequest } from './middleware/error.middleware';
import type { DependencyWatch } from '../shared/health/dependency-watch';
import { RequestDeadlines } from '../shared/http/request-deadlines';
import { requestObserver, routeName } from './middleware/metrics.middleware';
import { requestLog } from './middleware/request-log.middleware';
import { trafficObserver } from './middleware/traffic.middleware';
import type { TrafficRecorder } from '../shared/traffic/traffic-recorder';
import { apiReference } from './openapi/reference';
import { opsRouter, type OpsDeps } from './routes/ops.routes';
import { v1Routes, type RouteGuards, type V1Services } from './routes/v1.routes';
import { frontDoor, ownMessages, type ApiApp } from './http';

export interface AppDeps extends V1Services, OpsDeps {
  logger: Logger;
  guards: RouteGuards;
  traffic: TrafficRecorder;
  /** Express's `trust proxy`: X-Forwarded-For is believed only from these (TRUST_PROXY). */
  trustProxy: string[] | undefined;
  /** Which dependency is away: told of every 503, it logs each outage once. */
  watch: DependencyWatch;
  /** No request is answered later than this (REQUEST_DEADLINE). */
  requestDeadlineMs: number;
}

/**
 * Builds the API's HTTP side without listening (tests drive its listener with supertest): the
 * static /v1 paths answered directly, everything else by the Express app.
 */
export function createApp(deps: AppDeps): ApiApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // One path per operation: /v1/context/ and /V1/CONTEXT are unknown paths (404), as the
  // front door's exact matches already treat them.
  app.set('strict routing', true);
  app.set('case sensitive routing', true);
  app.set('trust proxy', deps.trustProxy ?? false);

  const observeMetrics = requestObserver(deps.metrics);
  const observeTraffic = trafficObserver(deps.traffic, deps.trustProxy !== undefined);
  const onError = errorHandler(deps.logger, deps.watch);
  const deadlines = new RequestDeadlines<Response>(deps.requestDeadlineMs, expireRequest(onError));
  deps.metrics.watchDeadlines(deadlines);
  const logged = requestLog({
    logger: deps.logger,
    observe: (res, ms) => {
      observeMetrics(res, ms);
      observeTraffic(res, ms);
    },
    deadlines,
  });
  const v1 = v1Routes(deps, deps.guards);
  app.use(logged);
  v1.mount(app);
  // After /v1, so API calls never test these paths.
  app.use(opsRouter(deps));
  const reference = apiReference();
  app.get('/v1/openapi.json', routeName('openapi'), (_req, res) => void res.type('json').send(reference.json));
  app.get('/docs', routeName('docs'), (_req, res) => void res.type('html').send(reference.html));
  // Like every other path the document lists: OPTIONS lists the methods, another method is a 405.
  app.all(['/v1/openapi.json', '/docs'], (req, res, next) => {
    res.setHeader('Allow', 'GET, HEAD');
    if (req.method === 'OPTIONS') return void res.status(204).end();
    next(new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${req.path}; use GET, HEAD`));
  });
  app.use((req, _res, next) => next(new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`)));
  app.use(onError);
  const messages = ownMessages(app);
  const listener = frontDoor(app, v1.exactPaths(logged), onError);
  // What Node's parser rejects never reaches the app: answer it in the contract's envelope, and
  // free a slow client's socket within seconds.
  return {
    listener,
    createServer: () => answerClientErrors(createServer({ ...messages, ...serverOptions() }, listener), deps.logger),
    close: () => deadlines.close(),
  };
}
