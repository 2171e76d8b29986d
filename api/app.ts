import { createServer } from 'node:http';
import express from 'express';
import type { Logger } from '../shared/logger/logger';
import { AppError } from '../shared/errors/app-error';
import { errorHandler } from './middleware/error.middleware';
import { requestObserver, routeName } from './middleware/metrics.middleware';
import { requestLog } from './middleware/request-log.middleware';
import { trafficObserver } from './middleware/traffic.middleware';
import type { TrafficRecorder } from '../shared/traffic/traffic-recorder';
import { apiReference } from './openapi/reference';
import { opsRouter, type OpsDeps } from './routes/ops.routes';
import { v1Routes, type RouteGuards, type V1Services } from './routes/v1.routes';
import { frontDoor, ownMessages, type ApiApp } from './http/front-door';

export interface AppDeps extends V1Services, OpsDeps {
  logger: Logger;
  guards: RouteGuards;
  traffic: TrafficRecorder;
  /** Express's `trust proxy`: X-Forwarded-For is believed only from these (TRUST_PROXY). */
  trustProxy: string[] | undefined;
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
  app.set('trust proxy', deps.trustProxy ?? false);

  const observeMetrics = requestObserver(deps.metrics);
  const observeTraffic = trafficObserver(deps.traffic, deps.trustProxy !== undefined);
  const logged = requestLog(deps.logger, (res, ms) => {
    observeMetrics(res, ms);
    observeTraffic(res, ms);
  });
  const v1 = v1Routes(deps, deps.guards);
  app.use(logged);
  v1.mount(app);
  // After /v1, so API calls never test these paths.
  app.use(opsRouter(deps));
  const reference = apiReference();
  app.get('/v1/openapi.json', routeName('openapi'), (_req, res) => void res.type('json').send(reference.json));
  app.get('/docs', routeName('docs'), (_req, res) => void res.type('html').send(reference.html));
  app.use((req, _res, next) => next(new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`)));
  const onError = errorHandler(deps.logger);
  app.use(onError);
  const messages = ownMessages(app);
  const listener = frontDoor(app, v1.exactPaths(logged), onError);
  return { listener, createServer: () => createServer(messages, listener) };
}
