import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { freePort, startLocalServices, type LocalServices } from './local-services';

/**
 * `npm run test:python`: the Python SDK's tests (sdk-python/tests). The unit tests bring their
 * own stub server; the integration tests need the real service, started here as the test suite
 * does: a throwaway Postgres and Redis (or the ones at DATABASE_URL / REDIS_URL, in a database
 * and key prefix of this run's own), a migrated database, the built API and worker, and a test
 * key and a live key (starter plan: 10 requests per second) made with the built CLI.
 *
 * Usage: test-python-sdk.js [--report FILE] [-k PATTERN]…  — `--report` writes the counts as
 * JSON `{"passed": N, "failed": M}` (for CI); other arguments go to the Python runner.
 */

const ROOT = path.join(__dirname, '../..');
const DIST = path.join(ROOT, 'dist');

/** Set by Ctrl-C or a CI timeout: each step checks it, and what was started is stopped. */
let interrupted = false;

class Interrupted extends Error {}

function checkpoint(): void {
  if (interrupted) throw new Interrupted('interrupted');
}

interface Spawned {
  name: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<void>;
}

function spawnBuilt(name: string, entry: string, env: NodeJS.ProcessEnv): Spawned {
  const child = spawn(process.execPath, [path.join(DIST, entry)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const spawned = { name, child, output: () => output, exited };
  running.add(spawned);
  void exited.then(() => running.delete(spawned));
  return spawned;
}

/** Every api and worker started and not yet exited, whatever step started it. */
const running = new Set<Spawned>();

async function stop(spawned: Spawned): Promise<void> {
  if (spawned.child.exitCode !== null || spawned.child.signalCode !== null) return;
  const kill = setTimeout(() => spawned.child.kill('SIGKILL'), 20_000);
  spawned.child.kill('SIGTERM');
  await spawned.exited;
  clearTimeout(kill);
}

const status = (url: string) =>
  new Promise<number>((resolve) => {
    http
      .get(url, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      })
      .on('error', () => resolve(0));
  });

/**
 * The built API on a free port, once /readyz answers 200. A port found free can be taken by
 * another process before the API binds it: then it starts again on another.
 */
async function startApi(env: NodeJS.ProcessEnv): Promise<Spawned & { url: string }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const api = spawnBuilt('api', 'api/main.js', { ...env, PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && api.child.exitCode === null) {
      checkpoint();
      if ((await status(`${url}/readyz`)) === 200) return { ...api, url };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await stop(api);
    if (attempt >= 3 || !api.output().includes('EADDRINUSE')) throw new Error(`the api did not start:\n${api.output()}`);
  }
}

function createKey(env: NodeJS.ProcessEnv, environment: 'test' | 'live'): string {
  const cli = spawnSync(
    process.execPath,
    [path.join(DIST, 'cli/main.js'), 'keys', 'create', '--account', 'python-sdk', '--env', environment, '--json'],
    { env, encoding: 'utf8' },
  );
  if (cli.status !== 0) throw new Error(`cos keys create --env ${environment} failed: ${cli.stderr}${cli.stdout}`);
  return (JSON.parse(cli.stdout) as { key: string }).key;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const admin = new Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const reportAt = args.indexOf('--report');
  const report = reportAt >= 0 ? args[reportAt + 1] : undefined;
  const passOn = reportAt >= 0 ? [...args.slice(0, reportAt), ...args.slice(reportAt + 2)] : args;
  if (reportAt >= 0 && !report) throw new Error('--report needs a file name');
  if (spawnSync('python3', ['--version']).status !== 0) throw new Error('python3 is needed (Debian: apt-get install python3)');

  const dir = mkdtempSync(path.join(os.tmpdir(), 'cos-pysdk-'));
  chmodSync(dir, 0o755); // the postgres user must reach its data folder inside
  // Undone in reverse order; each step registers its undoing as soon as it has succeeded.
  const cleanups: Array<() => Promise<void>> = [async () => rmSync(dir, { recursive: true, force: true })];
  let python: ChildProcess | undefined;
  // A first signal stops the tests and lets the steps below unwind; a second one exits at once.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      if (interrupted) process.exit(130);
      interrupted = true;
      if (python && python.exitCode === null && python.signalCode === null) python.kill('SIGTERM');
    });
  }
  try {
    const services: LocalServices = await startLocalServices(dir, {
      databaseUrl: process.env.DATABASE_URL,
      redisUrl: process.env.REDIS_URL,
      durable: false,
    });
    cleanups.push(() => services.stop());
    checkpoint();
    // A database of this run's own, also on a server that was given (and may be shared).
    const database = `cos_pysdk_${randomBytes(6).toString('hex')}`;
    await adminQuery(services.databaseUrl, `create database ${database}`);
    cleanups.push(() => adminQuery(services.databaseUrl, `drop database if exists ${database} with (force)`));
    checkpoint();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: withDatabase(services.databaseUrl, database),
      REDIS_URL: services.redisUrl,
      COS_SECRET: randomBytes(16).toString('hex'),
      COS_REDIS_PREFIX: `pysdk${randomBytes(4).toString('hex')}`,
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
      WORKER_NICE: '0',
    };
    const migrate = spawnSync(process.execPath, [path.join(DIST, 'shared/db/migrate.main.js')], { env, encoding: 'utf8' });
    if (migrate.status !== 0) throw new Error(`migration failed: ${migrate.stderr}${migrate.stdout}`);
    checkpoint();

    // Stopped before the database and servers they use (the cleanups run in reverse).
    cleanups.push(async () => void (await Promise.all([...running].map(stop))));
    const api = await startApi(env);
    const worker = spawnBuilt('worker', 'worker/main.js', env);
    const keys = { test: createKey(env, 'test'), live: createKey(env, 'live') };
    checkpoint();

    const noProxy = [process.env.NO_PROXY ?? process.env.no_proxy, '127.0.0.1', 'localhost'].filter(Boolean).join(',');
    python = spawn('python3', [path.join(ROOT, 'sdk-python/tests/run.py'), ...(report ? ['--report', report] : []), ...passOn], {
      cwd: ROOT,
      stdio: 'inherit',
      env: {
        ...process.env,
        COS_BASE_URL: api.url,
        COS_API_KEY: keys.test,
        COS_LIVE_API_KEY: keys.live,
        // The service is on loopback: a proxy from the environment must not stand in between.
        NO_PROXY: noProxy,
        no_proxy: noProxy,
        PYTHONDONTWRITEBYTECODE: '1',
      },
    });
    const tests = python;
    const code = await new Promise<number>((resolve) => tests.on('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))));
    checkpoint();
    if (code !== 0) {
      for (const spawned of [api, worker]) process.stderr.write(`--- ${spawned.name} output (last lines) ---\n${spawned.output()}\n`);
    }
    return code;
  } catch (error) {
    if (error instanceof Interrupted) return 130;
    throw error;
  } finally {
    while (cleanups.length > 0) await cleanups.pop()!().catch((error: unknown) => console.error(error));
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);
