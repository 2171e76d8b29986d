import { DECISION_LOG_DEFAULTS } from '../../shared/jobs/decision-log';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb, DB_ROLES, type Db } from '../../shared/db/database';
import { migrateToLatest } from '../../shared/db/migrator';
import { KeyService } from '../../shared/credentials/key.service';
import { freePort, startLocalServices, type LocalServices } from '../local-services';

/**
 * Child processes of the benchmarks that run the built service (bench:load, bench:live), and
 * the cleanup that stops them and removes the run's temporary folder whatever happens: normal
 * end, error, or Ctrl-C.
 */

export const HOST = '127.0.0.1';
export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Proc {
  name: string;
  child: ChildProcess;
  output: () => string;
  /** Lines it has written to stdout and stderr (each a log record) since it started. */
  lines: () => number;
  exited: Promise<void>;
}
const procs = new Set<Proc>();

/** Runs a node script as a child process, keeping the last 4,000 characters of its output and counting its lines. */
export function startProc(name: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let lines = 0;
  const keep = (chunk: Buffer) => {
    const text = chunk.toString();
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
    output = (output + text).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proc = { name, child, output: () => output, lines: () => lines, exited };
  procs.add(proc);
  void exited.then(() => procs.delete(proc));
  return proc;
}

export async function stopProc(proc: Proc, timeoutMs = 20_000): Promise<void> {
  if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill('SIGTERM');
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), timeoutMs);
  await proc.exited;
  clearTimeout(timer);
}

export function mustBeRunning(...list: Proc[]): void {
  for (const proc of list) {
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) throw new Error(`${proc.name} exited: ${proc.output()}`);
  }
}

/**
 * Waits until the API's decision log has sent what it held when called: decisions are logged
 * behind the answers, at most one window later (shared/jobs/decision-log.ts), so an empty queue
 * right after a run does not yet mean its decisions were applied.
 */
export async function decisionLogSent(): Promise<void> {
  await sleep(DECISION_LOG_DEFAULTS.flushMs + 50);
}

/** Polls `check` until it returns a value; its errors end the wait (bounded in time). */
export async function waitUntil<T>(what: string, timeoutMs: number, intervalMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await sleep(intervalMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Starts a server process on a free port of 127.0.0.1 and waits until `probe` answers 2xx. */
export async function startServer(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  probe: string,
): Promise<{ proc: Proc; port: number }> {
  const port = await freePort();
  const proc = startProc(name, args, { ...env, PORT: String(port) });
  await waitUntil(`${name} to listen`, 20_000, 100, async () => {
    if (proc.child.exitCode !== null) throw new Error(`${name} exited: ${proc.output()}`);
    const res = await fetch(`http://${HOST}:${port}${probe}`, { method: probe === '/bare' ? 'POST' : 'GET' }).catch(() => undefined);
    return res?.ok ? true : undefined;
  });
  return { proc, port };
}

/**
 * Runs `body` with a new temporary folder (`prefix`…, reachable by the postgres user when run
 * as root). Afterwards — also on error, SIGINT or SIGTERM — calls `interrupt`, stops every
 * process startProc started, runs the cleanup steps `body` registered (newest first) and
 * removes the folder; then returns body's result or rethrows its error.
 */
export async function withCleanup<T>(
  prefix: string,
  body: (dir: string, onCleanup: (step: () => Promise<void>) => void) => Promise<T>,
  interrupt: () => void = () => undefined,
): Promise<T> {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  chmodSync(dir, 0o755); // the postgres user must reach its data folder when we run as root
  const cleanups: Array<() => Promise<void>> = [async () => rmSync(dir, { recursive: true, force: true })];
  // One cleanup, however many callers (a signal can arrive while the run is failing).
  let cleaning: Promise<void> | undefined;
  const cleanup = () =>
    (cleaning ??= (async () => {
      interrupt();
      await Promise.all([...procs].map((proc) => stopProc(proc, 10_000)));
      for (const step of cleanups.reverse()) await step().catch((error: unknown) => log(`cleanup: ${String(error)}`));
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`${signal}: stopping everything`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  try {
    return await body(dir, (step) => cleanups.push(step));
  } finally {
    await cleanup();
  }
}

/** The signing secret of the benchmarks' throwaway services. */
export const BENCH_SECRET = 'cos-bench-secret-not-for-production-0123456789';

/**
 * Throwaway Postgres and Redis in `dir` (stopped by the cleanup), migrated, with a test key of
 * account `account`; `env` is what the built api and worker run with (production mode,
 * warnings only, Redis keys under `prefix`).
 */
export async function startBenchBackend(
  dir: string,
  onCleanup: (step: () => Promise<void>) => void,
  options: { account: string; keyName: string; prefix: string; dbPoolSize: number; durable?: boolean },
): Promise<{ services: LocalServices; db: Db; key: string; env: NodeJS.ProcessEnv }> {
  log('starting Postgres and Redis…');
  // Durable: Postgres syncs and writes full pages as a production one does; its data goes all the same.
  const services = await startLocalServices(dir, { durable: options.durable ?? false, keepData: false });
  onCleanup(() => services.stop());
  const db = createDb(services.databaseUrl, { ...DB_ROLES.tool, poolSize: options.dbPoolSize });
  onCleanup(() => db.destroy());
  const { error } = await migrateToLatest(db);
  if (error) throw error;
  const key = (await new KeyService(db, BENCH_SECRET).create({ account: options.account, environment: 'test', name: options.keyName })).key;
  const env = {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: services.databaseUrl,
    REDIS_URL: services.redisUrl,
    COS_SECRET: BENCH_SECRET,
    LOG_LEVEL: 'warn',
    COS_REDIS_PREFIX: options.prefix,
    // Several workers share this host; the benchmarks do not scrape them.
    METRICS_PORT: '0',
  };
  return { services, db, key, env };
}
