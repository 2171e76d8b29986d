import { equals, iterableEquality } from '@jest/expect-utils';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp, type AppDeps } from '../../api/app';
import { buildApiDependencies } from '../../api/dependencies';
import { loadApiConfig, loadWorkerConfig } from '../../shared/config/config';
import type { Environment } from '../../shared/domain/environment';
import type { Scope } from '../../shared/credentials/api-key';
import { KeyService } from '../../shared/credentials/key.service';
import { createLogger, type Logger } from '../../shared/logger/logger';
import { startWorker, type RunningWorker } from '../../worker/worker';
import { apiListener, apiUrl } from './api-responses';
import { createTestEnv, TEST_SECRET, type TestEnv } from './test-env';

export interface Harness {
  env: TestEnv;
  app: RequestListener;
  /** The API's dependencies behind `app`. */
  deps: ReturnType<typeof buildApiDependencies>;
  /** Another app on the same dependencies, some of them replaced. */
  appWith(overrides: Partial<AppDeps>): RequestListener;
  http: () => ReturnType<typeof request>;
  keys: KeyService;
  /** Creates a key (and its account if missing) and returns the plain key. */
  key(account: string, environment?: Environment, scopes?: Scope[]): Promise<string>;
  /** Serves the app over real HTTP on a free loopback port (for clients that need a URL); returns its base URL. */
  listen(): Promise<string>;
  /**
   * Starts a worker; it logs to `logger` when given (the harness's silent logger otherwise) and
   * `workerEnv` adds to or overrides the harness's environment.
   */
  startWorker(logger?: Logger, workerEnv?: Record<string, string>): RunningWorker;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** The API's and workers' clock; the API's rate limiter then takes its time from it too. */
  clock?: () => number;
  /** The API's logger (silent unless TEST_LOG_LEVEL is set). */
  logger?: Logger;
}

/**
 * The real API app (supertest) and in-process workers on this test file's database and prefix.
 * `extra` adds to their environment; as a function it can use the test env (its database URL, say).
 */
export async function startHarness(
  extra: Record<string, string> | ((env: TestEnv) => Record<string, string>) = {},
  options: HarnessOptions = {},
): Promise<Harness> {
  const env = await createTestEnv();
  const extraEnv = typeof extra === 'function' ? extra(env) : extra;
  const { clock } = options;
  const logger = options.logger ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'test');
  const deps = buildApiDependencies(loadApiConfig(env.processEnv({ KEY_REFRESH_INTERVAL: '1s', ...extraEnv })), logger, clock);
  const api = createApp(deps);
  const app = apiListener(api.listener);
  // A cluster client takes a moment to learn the slot map; until then the API answers 503, as a
  // process does before its readiness probe passes. A test that made Redis unreachable on
  // purpose (a dead seed node) goes on once the wait is over.
  if (env.clusterNodes) {
    await eventually(async () => (await deps.readiness()).checks.redis === 'ok', 10_000).catch(() => undefined);
  }
  const apiServer = api.createServer();
  const keys = new KeyService(env.db, TEST_SECRET);
  const workers: RunningWorker[] = [];
  const servers: Server[] = [];
  return {
    env,
    app,
    deps,
    appWith: (overrides) => apiListener(createApp({ ...deps, ...overrides }).listener),
    // The server the API runs in (its parser errors answered as in production), started by
    // supertest for each batch of requests.
    http: () => request(apiServer),
    keys,
    key: async (account, environment = 'test', scopes) => (await keys.create({ account, environment, scopes })).key,
    listen: async () => {
      const server = api.createServer().listen(0, '127.0.0.1');
      servers.push(server);
      await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
      return apiUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    },
    startWorker: (workerLogger = logger, workerEnv = {}) => {
      const config = loadWorkerConfig(env.processEnv({ WORKER_CONCURRENCY: '64', ...extraEnv, ...workerEnv }));
      const worker = startWorker({ config, logger: workerLogger, clock });
      workers.push(worker);
      return worker;
    },
    close: async () => {
      for (const server of servers) server.closeAllConnections();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      await Promise.all(workers.map((w) => w.close()));
      await deps.close();
      await env.close();
    },
  };
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

/** What a poll may meet before what it waits for exists: a connection refused, reset or not yet open. */
function isNotYet(error: unknown): boolean {
  const code =
    (error as { code?: unknown; cause?: { code?: unknown } } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === 'string' && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(code);
}

/**
 * Polls until `check` returns a truthy value ("not yet" is a falsy one); throws after timeoutMs.
 * A thrown error ends the wait at once — an assertion inside `check` fails the test then, not at
 * the time-out — except a connection that is refused or reset (a process still starting).
 */
export async function eventually<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 20_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      if (!isNotYet(error)) throw error;
      last = error;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
}

/**
 * Polls `read` until what it returns equals `expected` as `toEqual` compares (asymmetric matchers
 * too); at the time-out, fails with `toEqual`'s diff of the last value read.
 */
export async function eventuallyEqual<T>(read: () => Promise<T>, expected: unknown, timeoutMs = 20_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (equals(value, expected, [iterableEquality])) return value;
    if (Date.now() >= deadline) {
      expect(value).toEqual(expected);
      return value;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
