import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';

/**
 * Starts a private PostgreSQL and Redis in a folder, on free loopback ports — used by
 * `npm start` (data kept in .cos/) and by the test setup (throwaway folders). Postgres runs as
 * the `postgres` user when we are root (initdb refuses root), as ourselves otherwise.
 */
export interface LocalServices {
  databaseUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
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

function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  const uid = id('-u');
  if (!Number.isFinite(uid) || uid <= 0) throw new Error('running as root needs a "postgres" system user to run PostgreSQL');
  return { uid, gid: id('-g') };
}

function ensureOwnedDir(dir: string, owner?: { uid: number; gid: number }): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (owner && statSync(dir).uid !== owner.uid) chownSync(dir, owner.uid, owner.gid);
}

function run(command: string, args: string[], owner?: { uid: number; gid: number }): void {
  const result = spawnSync(command, args, { encoding: 'utf8', ...(owner ?? {}) });
  if (result.status !== 0) {
    throw new Error(`${command} failed: ${result.error?.message ?? ''}${result.stderr ?? ''}${result.stdout ?? ''}`.trim());
  }
}

async function waitFor(check: () => Promise<void>, what: string, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited with code ${child.exitCode}`);
    try {
      return await check();
    } catch (error) {
      lastError = error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what} did not start in time: ${String(lastError)}`);
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

export async function startPostgres(dataDir: string, options: { durable: boolean }): Promise<{ url: string; child: ChildProcess }> {
  const owner = postgresUser();
  ensureOwnedDir(dataDir, owner);
  if (!existsSync(path.join(dataDir, 'PG_VERSION'))) {
    run(
      'initdb',
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', ...(options.durable ? [] : ['--no-sync'])],
      owner,
    );
  }
  const port = await freePort();
  const args = ['-D', dataDir, '-p', String(port), '-k', dataDir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'];
  if (!options.durable) args.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  const child = spawn('postgres', args, { stdio: ['ignore', 'ignore', 'pipe'], ...(owner ?? {}) });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitFor(
    async () => {
      const client = new Client({ connectionString: url });
      await client.connect();
      await client.end();
    },
    `postgres (${stderr.trim().split('\n').pop() ?? ''})`,
    child,
  );
  return { url, child };
}

export async function startRedis(dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
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
    ],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
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
    'redis-server',
    child,
  );
  return { url, child };
}

/** Starts whichever of Postgres/Redis is not given by URL. */
export async function startLocalServices(
  baseDir: string,
  options: { databaseUrl?: string; redisUrl?: string; durable: boolean },
): Promise<LocalServices> {
  mkdirSync(baseDir, { recursive: true });
  const children: Array<[ChildProcess, NodeJS.Signals]> = [];
  try {
    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      const pg = await startPostgres(path.join(baseDir, 'pg'), options);
      children.push([pg.child, 'SIGINT']);
      databaseUrl = pg.url;
    }
    let redisUrl = options.redisUrl;
    if (!redisUrl) {
      const redis = await startRedis(path.join(baseDir, 'redis'));
      children.push([redis.child, 'SIGTERM']);
      redisUrl = redis.url;
    }
    return {
      databaseUrl,
      redisUrl,
      stop: async () => {
        await Promise.all(children.map(([child, signal]) => stopChild(child, signal)));
      },
    };
  } catch (error) {
    await Promise.all(children.map(([child, signal]) => stopChild(child, signal)));
    throw error;
  }
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
