import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { postgresUser, preparePostgresDataDir, socketDir, type PostgresUser } from './postgres-dirs';
import type { ChildSpec } from './supervisor';

/**
 * Starts a private PostgreSQL and Redis in a folder, on free loopback ports — used by
 * `npm start` (data kept in .cos/) and by the test setup (throwaway folders). Postgres runs as
 * the `postgres` user when we are root (initdb refuses root), as ourselves otherwise; its data
 * moves out of the folder when that user cannot reach it (see postgres-dirs.ts).
 */
export interface LocalServices {
  databaseUrl: string;
  redisUrl: string;
  /** The data folder of the Postgres we started, if we started one. */
  postgresDataDir?: string;
  /** The servers started here (none when given by URL), to stop and start again. */
  postgres?: ServiceProcess;
  redis?: ServiceProcess;
  stop(): Promise<void>;
}

/** A Postgres or Redis started here, which can be stopped and started again (outage tests, the soak). */
export interface ServiceProcess {
  url: string;
  /** The running server process (a new one after `start`). */
  readonly child: ChildProcess;
  /**
   * Stops it: `clean` is Postgres's fast shutdown (SIGINT) or Redis's SHUTDOWN on SIGTERM, which
   * syncs its append-only file; `kill` is an immediate shutdown (SIGQUIT) or SIGKILL (Redis).
   */
  stop(how?: 'clean' | 'kill'): Promise<void>;
  /** Starts it again, on the same port and data. */
  start(): Promise<void>;
}

export interface LocalServiceOptions {
  /** Data kept (fsync on, as for npm start) or throwaway (fsync off). */
  durable: boolean;
  /** Whether stopping leaves Postgres's data where it was put outside the base directory: `durable` unless said. */
  keepData?: boolean;
  /**
   * In a process group of their own, so a Ctrl-C in the terminal reaches only the caller, which
   * stops them after the processes using them have finished (npm start).
   */
  ownProcessGroup?: boolean;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function run(command: string, args: string[], cwd: string, owner?: PostgresUser): void {
  const result = spawnSync(command, args, { encoding: 'utf8', cwd, ...(owner ?? {}) });
  if (result.status !== 0) {
    throw new Error(`${command} failed: ${result.error?.message ?? ''}${result.stderr ?? ''}${result.stdout ?? ''}`.trim());
  }
}

/**
 * Waits until `check` passes. A server that does not come up is killed (`kill`), so a caller that
 * tries again (the supervisor of npm start) never meets a stray one holding the port or data.
 */
async function waitFor(
  check: () => Promise<void>,
  what: () => string,
  child: ChildProcess,
  kill: NodeJS.Signals,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${what()} exited with ${child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`}`);
    }
    try {
      return await check();
    } catch (error) {
      lastError = error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await stopChild(child, kill);
  throw new Error(`${what()} did not start in time: ${String(lastError)}`);
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

/**
 * Starts Postgres with its data in `preferredDir` (or where postgres-dirs.ts puts it when the
 * user running it cannot reach that folder). Its processes start inside the data folder, so an
 * unreachable working directory is no concern of theirs.
 */
export async function startPostgres(preferredDir: string, options: LocalServiceOptions): Promise<ServiceProcess & { dataDir: string }> {
  const owner = postgresUser();
  const dataDir = preparePostgresDataDir(preferredDir, owner);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    run(
      'initdb',
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', ...(options.durable ? [] : ['--no-sync'])],
      dataDir,
      owner,
    );
  }
  const port = await freePort();
  const sockets = socketDir(dataDir, port);
  const args = ['-D', dataDir, '-p', String(port), '-k', sockets, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'];
  if (!options.durable) args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const launch = async () => {
    const child = spawn('postgres', args, {
      cwd: dataDir,
      detached: options.ownProcessGroup,
      stdio: ['ignore', 'ignore', 'pipe'],
      ...(owner ?? {}),
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    await waitFor(
      async () => {
        const client = new Client({ connectionString: url });
        await client.connect();
        await client.end();
      },
      () => `postgres (${stderr.trim().split('\n').pop() ?? ''})`,
      child,
      'SIGQUIT',
    );
    return child;
  };
  return restartable(url, await launch(), launch, { clean: 'SIGINT', kill: 'SIGQUIT' }, { dataDir });
}

/** `extraArgs`: more redis-server options (a cluster node's, scripts/redis-cluster.ts). */
export async function startRedis(dataDir: string, options: LocalServiceOptions, extraArgs: string[] = []): Promise<ServiceProcess> {
  mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const launch = async () => {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dataDir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
        ...extraArgs,
      ],
      { detached: options.ownProcessGroup, stdio: 'ignore' },
    );
    await waitFor(
      () =>
        new Promise<void>((resolve, reject) => {
          const socket = net.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
          socket.on('data', (data) => {
            socket.destroy();
            if (data.toString().startsWith('+PONG')) resolve();
            else reject(new Error(data.toString()));
          });
          socket.on('error', reject);
        }),
      () => 'redis-server',
      child,
      'SIGKILL',
    );
    return child;
  };
  return restartable(url, await launch(), launch, { clean: 'SIGTERM', kill: 'SIGKILL' }, {});
}

function restartable<Extra extends object>(
  url: string,
  first: ChildProcess,
  launch: () => Promise<ChildProcess>,
  signals: Record<'clean' | 'kill', NodeJS.Signals>,
  extra: Extra,
): ServiceProcess & Extra {
  let child = first;
  return {
    ...extra,
    url,
    get child() {
      return child;
    },
    stop: (how = 'clean') => stopChild(child, signals[how]),
    start: async () => {
      child = await launch();
    },
  };
}

/**
 * Starts whichever of Postgres/Redis is not given by URL. Unless it keeps the data (`keepData`,
 * else `durable`), stopping also removes Postgres's data when it was put outside `baseDir` (the
 * caller removes `baseDir`).
 */
export async function startLocalServices(
  baseDir: string,
  options: LocalServiceOptions & { databaseUrl?: string; redisUrl?: string },
): Promise<LocalServices> {
  mkdirSync(baseDir, { recursive: true });
  const started: ServiceProcess[] = [];
  const preferredPgDir = path.join(baseDir, 'pg');
  let postgresDataDir: string | undefined;
  const stopAll = async () => {
    await Promise.all(started.map((service) => service.stop()));
    if (!(options.keepData ?? options.durable) && postgresDataDir && postgresDataDir !== preferredPgDir) {
      rmSync(postgresDataDir, { recursive: true, force: true });
    }
  };
  try {
    const postgres = options.databaseUrl ? undefined : await startPostgres(preferredPgDir, options);
    if (postgres) started.push(postgres);
    postgresDataDir = postgres?.dataDir;
    const redis = options.redisUrl ? undefined : await startRedis(path.join(baseDir, 'redis'), options);
    if (redis) started.push(redis);
    return {
      databaseUrl: postgres?.url ?? options.databaseUrl!,
      redisUrl: redis?.url ?? options.redisUrl!,
      postgresDataDir,
      postgres,
      redis,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/**
 * The Postgres and Redis started here, for a Supervisor (supervisor.ts): watched, and started again
 * on the same port and data when they die.
 */
export function serviceSpecs(services: Pick<LocalServices, 'postgres' | 'redis'>): ChildSpec[] {
  const specs: ChildSpec[] = [];
  for (const [name, service] of [
    ['postgres', services.postgres],
    ['redis', services.redis],
  ] as const) {
    if (!service) continue;
    specs.push({
      name,
      running: service.child,
      start: async () => {
        await service.start();
        return service.child;
      },
      stop: () => service.stop(),
    });
  }
  return specs;
}

export function writeEnvFile(file: string, values: Record<string, string>): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    Object.entries(values)
      .map(([k, v]) => `${k}=${v}`)
      .join('\n') + '\n',
    { mode: 0o600 },
  );
}
