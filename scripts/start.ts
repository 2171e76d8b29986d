import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { DEFAULT_HOST, DEFAULT_METRICS_PORT } from '../shared/config/config';
import { projectRoot } from '../shared/config/dev-env';
import { createDb, DB_ROLES, type Db } from '../shared/db/database';
import { discardSchema, migrateToLatest, preBaselineMigrations } from '../shared/db/migrator';
import { createRedis } from '../shared/redis/redis';
import { hashApiKey } from '../shared/credentials/api-key';
import { nodeArgs } from '../shared/process/node-flags';
import { findCredentialByHash } from '../shared/credentials/key.repository';
import { KeyService } from '../shared/credentials/key.service';
import { demoLogin } from './demo-login';
import { serviceSpecs, startLocalServices, writeEnvFile } from './local-services';
import { Supervisor, type ChildSpec } from './supervisor';

/**
 * `npm start`: the whole service on one machine. Starts Postgres and Redis in .cos/ unless
 * DATABASE_URL / REDIS_URL (or REDIS_CLUSTER_NODES) are set (Postgres's data elsewhere when the
 * postgres user cannot reach .cos/, see postgres-dirs.ts), migrates, ensures a demo account with
 * a test key and a dashboard login, then runs the api, one worker and the dashboard until
 * Ctrl-C / SIGTERM, and stops everything it started. A process it started that dies (Postgres
 * and Redis too) is started again with backoff; one that keeps dying stops it all (supervisor.ts).
 */
const root = projectRoot();
const dotCos = path.join(root, '.cos');
const log = (line: string) => process.stdout.write(`[cos] ${line}\n`);

function devSecret(): string {
  if (process.env.COS_SECRET) return process.env.COS_SECRET;
  const file = path.join(dotCos, 'secret');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64url'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/**
 * Migrates. Data in .cos/ from a release before the schema baseline cannot be carried over
 * (pre-1.0): Postgres and Redis of npm start's own are emptied, with a line saying so; a
 * DATABASE_URL given from outside is never emptied, only refused (migrateToLatest's error).
 */
async function migrate(db: Db, own: { postgres: boolean; redisUrl: string | undefined }): Promise<void> {
  const earlier = own.postgres ? await preBaselineMigrations(db) : [];
  if (earlier.length > 0) {
    log(`.cos/ holds data of a release before the schema baseline (${earlier.join(', ')}); it cannot be carried over: starting empty`);
    await discardSchema(db);
    if (own.redisUrl) {
      const redis = createRedis(own.redisUrl, 'once');
      await redis.connect();
      await redis.flushdb();
      redis.disconnect();
    }
  }
  const { error } = await migrateToLatest(db);
  if (error) throw error;
}

async function demoCredentials(
  databaseUrl: string,
  secret: string,
  own: { postgres: boolean; redisUrl: string | undefined },
): Promise<{ key: string; login: { email: string; password: string } }> {
  const db = createDb(databaseUrl, DB_ROLES.tool);
  try {
    await migrate(db, own);
    const file = path.join(dotCos, 'demo-key');
    if (existsSync(file)) {
      const saved = readFileSync(file, 'utf8').trim();
      const credential = await findCredentialByHash(db, hashApiKey(saved, secret));
      const expired = credential?.expiresAt && Date.parse(credential.expiresAt) <= Date.now();
      if (credential && !credential.revokedAt && !credential.deletedAt && !expired && !credential.restricted) {
        return { key: saved, login: await demoLogin(db, path.join(dotCos, 'demo-login')) };
      }
    }
    const issued = await new KeyService(db, secret).create({ account: 'demo', environment: 'test', name: 'demo test key' });
    writeFileSync(file, issued.key, { mode: 0o600 });
    return { key: issued.key, login: await demoLogin(db, path.join(dotCos, 'demo-login')) };
  } finally {
    await db.destroy();
  }
}

/**
 * The banner is printed once the API and the dashboard answer, so its curl works right away. Gives up quietly
 * when `stopping` turns true (a crash loop, or Ctrl-C).
 */
async function waitForHttp(what: string, url: string, stopping: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping()) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!stopping()) throw new Error(`the ${what} did not answer on ${url} within ${timeoutMs / 1000} s`);
}

function clusterNodeUrl(nodes: string | undefined): string | undefined {
  const first = nodes?.split(',')[0]?.trim();
  return first ? `redis://${first}` : undefined;
}

/**
 * The host of the URLs npm start waits on and prints, for the HOST the processes listen on:
 * `localhost` for the default and for every interface (which includes loopback); any other
 * address answers only at itself.
 */
function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === DEFAULT_HOST) return 'localhost';
  return isIP(host) === 6 ? `[${host}]` : host;
}

function appSpec(role: 'api' | 'worker' | 'dashboard', env: NodeJS.ProcessEnv): ChildSpec {
  const main = path.join(root, 'dist', role, 'main.js');
  return {
    name: role,
    start: () => spawn(process.execPath, role === 'dashboard' ? [main] : nodeArgs(role, main), { env, stdio: 'inherit' }),
  };
}

async function main(): Promise<void> {
  // A promise, so a Ctrl-C while they are still starting stops them too.
  const services = startLocalServices(dotCos, {
    databaseUrl: process.env.DATABASE_URL,
    // With a Redis Cluster (REDIS_CLUSTER_NODES) no local Redis is started: its first node
    // stands in for REDIS_URL, which the api and worker then ignore.
    redisUrl: process.env.REDIS_URL ?? clusterNodeUrl(process.env.REDIS_CLUSTER_NODES),
    durable: true,
    ownProcessGroup: true,
  });
  let stopping = false;
  const supervisor = new Supervisor({
    log,
    onGiveUp: ({ message }) => {
      process.stderr.write(`[cos] ${message}\n`);
      void stop(1);
    },
  });
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    log('stopping…');
    // The api, worker and dashboard first, then the Postgres and Redis they use.
    await supervisor.stop();
    // Those still starting when the stop began, not yet supervised (stopping twice is harmless).
    await services.then(
      (started) => started.stop(),
      () => undefined,
    );
    log('stopped');
    process.exit(code);
  };
  // SIGHUP: the terminal closed; Postgres and Redis, in their own process group, never see it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0));

  try {
    const started = await services;
    const { databaseUrl, redisUrl, postgresDataDir } = started;
    // From here on, a stop that began while we waited (Ctrl-C, a crash loop) ends the start.
    if (stopping) return;
    await supervisor.start(serviceSpecs(started));
    const secret = devSecret();
    const port = process.env.PORT ?? '3000';
    const dashboardPort = process.env.DASHBOARD_PORT || '3001';
    const env = {
      ...process.env,
      NODE_ENV: process.env.NODE_ENV ?? 'development',
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      COS_SECRET: secret,
      PORT: port,
      DASHBOARD_PORT: dashboardPort,
    };
    writeEnvFile(path.join(dotCos, 'runtime.env'), {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      ...(process.env.REDIS_CLUSTER_NODES ? { REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES } : {}),
      COS_SECRET: secret,
      NODE_ENV: env.NODE_ENV,
    });
    const ownRedis = !process.env.REDIS_URL && !process.env.REDIS_CLUSTER_NODES;
    const { key, login } = await demoCredentials(databaseUrl, secret, {
      postgres: !process.env.DATABASE_URL,
      redisUrl: ownRedis ? redisUrl : undefined,
    });
    if (stopping) return;
    await supervisor.start((['api', 'worker', 'dashboard'] as const).map((role) => appSpec(role, env)));
    const host = process.env.HOST?.trim() || DEFAULT_HOST;
    const shown = reachableHost(host);
    // Waited on at 127.0.0.1 rather than localhost, which may resolve to ::1 first.
    const probed = shown === 'localhost' ? '127.0.0.1' : shown;
    await waitForHttp('API', `http://${probed}:${port}/readyz`, () => stopping);
    await waitForHttp('dashboard', `http://${probed}:${dashboardPort}/healthz`, () => stopping);
    if (stopping) return;
    log(`Postgres: ${databaseUrl}`);
    log(`Redis:    ${process.env.REDIS_CLUSTER_NODES ? `cluster ${process.env.REDIS_CLUSTER_NODES}` : redisUrl}`);
    if (postgresDataDir && path.dirname(postgresDataDir) !== dotCos) {
      log(`Postgres data: ${postgresDataDir} (the postgres user cannot enter this project's folder)`);
    }
    log(
      host === DEFAULT_HOST
        ? `Listening on ${DEFAULT_HOST} only: this machine (HOST=0.0.0.0 listens on every interface)`
        : `Listening on ${host} (HOST)`,
    );
    log(`API:      http://${shown}:${port}  (one worker running; Ctrl-C stops everything)`);
    const metricsPort = process.env.METRICS_PORT || String(DEFAULT_METRICS_PORT);
    log(
      `Metrics:  http://${shown}:${port}/metrics (api), ${metricsPort === '0' ? 'worker: off' : `http://${shown}:${metricsPort}/metrics (worker)`}`,
    );
    log(`Dashboard: http://${shown}:${dashboardPort}  (sign in as ${login.email}, password ${login.password})`);
    log(`demo account "demo", test key: ${key}`);
    log('try:');
    process.stdout.write(
      `  curl -s http://${shown}:${port}/v1/context -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" \\\n` +
        `    -d '{"userId":"user-1","task":"Write the quarterly report","complexity":"high"}'\n`,
    );
    log('more keys: npm run cli -- keys create --account demo --env live --json');
  } catch (error) {
    if (stopping) return;
    process.stderr.write(`[cos] start failed: ${error instanceof Error ? error.message : String(error)}\n`);
    await stop(1);
  }
}

void main();
