import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import type { Db } from '../../shared/db/database';
import { KeyService } from '../../shared/credentials/key.service';
import { cpuPercent, cpuSnapshot, settleMachine, type CpuSnapshot, type Roles } from './cpu';
import { EventQueues, keysOf } from './event-queues';
import { cannon, postEach } from './load-client';
import { childPids } from './memory';
import { nodeArgs } from '../../shared/process/node-flags';
import { BENCH_SECRET, log, startBenchBackend, startProc, startServer, stopProc, waitUntil, type Proc } from './processes';

/**
 * bench:load's setup and warm-up: throwaway Postgres and Redis, a test key and a live key,
 * the bare Express baseline and the built api and worker(s) as processes, every user's profile
 * cached for both keys; and what every phase needs of them (measuring CPU, waiting for the
 * queue to drain, starting and stopping workers, the API with N processes).
 */

export interface LoadOptions {
  duration: number;
  warmup: number;
  rounds: number;
  connections: number;
  users: number;
  workers: number;
  compareWorkers: number;
  /** Requests per second of the open-loop phase. */
  steadyRate: number;
  /** Longest wait (s) for a quiet machine before each phase; 0 skips it. */
  settle: number;
  json: boolean;
  cpuProfDir?: string;
}

export interface Measured<T> {
  value: T;
  cpu: Roles;
  seconds: number;
  /** Forks Redis made meanwhile: each an append-only file rewrite, whose CPU counts as Redis's. */
  redisForks: number;
}

export interface Server {
  proc: Proc;
  port: number;
}

/** The role the bench process's own CPU is booked under: the load clients run in it. */
export const LOAD_GENERATOR = 'load generator';
const PREFIX = 'bench';
const COMPLEXITIES = ['low', 'medium', 'high'];

export class LoadRig {
  /** Pids of our processes by role, for the CPU accounting. */
  readonly roles: Record<string, number[]> = {};
  workers: Proc[] = [];
  api!: Server;
  bare!: Server;
  private nextUser = 0;
  private readonly users: string[];
  private readonly profArgs: string[];

  private constructor(
    readonly opts: LoadOptions,
    private readonly dir: string,
    private readonly redisPort: string,
    /** The rig's own connection to the run's Redis (what the api stores there is read through it). */
    readonly redis: Redis,
    readonly db: Db,
    /** Every partition of the events queue, read as one. */
    readonly queues: EventQueues,
    private readonly env: NodeJS.ProcessEnv,
    /** Headers of the test key (no limiter) and of the live key (limiter and metering on every request). */
    readonly headers: Record<string, string>,
    readonly liveHeaders: Record<string, string>,
  ) {
    this.users = Array.from({ length: opts.users }, (_, i) => `bench-user-${String(i).padStart(5, '0')}`);
    this.profArgs = opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`] : [];
  }

  static async start(dir: string, onCleanup: (step: () => Promise<void>) => void, opts: LoadOptions): Promise<LoadRig> {
    const { services, db, key, env } = await startBenchBackend(dir, onCleanup, {
      account: 'bench',
      keyName: 'bench key',
      prefix: PREFIX,
      dbPoolSize: 4,
    });
    // The live key's account is on a plan with a per-key override far above any load here, so
    // every request runs the limiter and metering and none is refused.
    const liveKey = (
      await new KeyService(db, BENCH_SECRET).create({
        account: 'bench',
        environment: 'live',
        name: 'bench live key',
        rateLimitRps: 1_000_000,
      })
    ).key;
    await db.updateTable('accounts').set({ plan: 'enterprise' }).where('name', '=', 'bench').execute();
    const redis = new Redis(services.redisUrl, { maxRetriesPerRequest: null });
    onCleanup(async () => redis.disconnect());
    const queues = new EventQueues(redis, keysOf(env));
    onCleanup(() => queues.close());
    const json = { 'Content-Type': 'application/json' };
    const rig = new LoadRig(
      opts,
      dir,
      new URL(services.redisUrl).port,
      redis,
      db,
      queues,
      { ...env, API_PROCESSES: '1' },
      {
        ...json,
        Authorization: `Bearer ${key}`,
      },
      { ...json, Authorization: `Bearer ${liveKey}` },
    );

    log('bare Express baseline…');
    rig.bare = await startServer('bare express', [path.join(__dirname, 'bare-server.js')], env, '/bare');
    rig.roles.bare = [rig.bare.proc.child.pid!];
    await rig.startApi(1);
    rig.startWorkers(opts.workers);
    for (const headers of [rig.headers, rig.liveHeaders]) await rig.warmUsers(headers);
    log(`warming up for ${opts.warmup} s each: bare, api…`);
    await cannon(rig.bare.port, postEach('/bare', rig.headers, rig.contextBody), { connections: opts.connections, duration: opts.warmup });
    await cannon(rig.api.port, rig.contextRequest(rig.headers), { connections: opts.connections, duration: opts.warmup });
    await rig.drained('the warm-up decisions to be applied');
    return rig;
  }

  /** The next context call: the userId rotates over the users, the complexity over three. */
  readonly contextPayload = () => {
    const i = this.nextUser++;
    return { userId: this.users[i % this.users.length], task: 'Write the quarterly report', complexity: COMPLEXITIES[i % 3] };
  };
  readonly contextBody = (): string => JSON.stringify(this.contextPayload());
  contextRequest(headers: Record<string, string>) {
    return postEach('/v1/context', headers, this.contextBody);
  }

  /** One context call per user, so every profile is created and cached before anything is measured. */
  async warmUsers(headers: Record<string, string>): Promise<void> {
    log(`warming ${this.users.length} cached profiles…`);
    this.nextUser = 0;
    const warm = await cannon(this.api.port, this.contextRequest(headers), {
      amount: this.users.length,
      connections: Math.min(this.opts.connections, this.users.length),
    });
    if (warm.ok !== this.users.length)
      throw new Error(
        `warm-up: ${warm.ok}/${this.users.length} contexts succeeded (${JSON.stringify(warm.statusCodes)}) ${this.api.proc.output()}`,
      );
    await this.drained('the warm-up decisions to be applied');
  }

  /** (Re)starts the API with `processes` processes (API_PROCESSES), waiting until each is forked. */
  async startApi(processes: number): Promise<void> {
    if (this.api) await stopProc(this.api.proc);
    this.api = await startServer(
      'api',
      [...this.profArgs, ...nodeArgs('api', path.join(__dirname, '../../api/main.js'))],
      { ...this.env, API_PROCESSES: String(processes) },
      '/readyz',
    );
    const primary = this.api.proc.child.pid!;
    const children =
      processes > 1
        ? await waitUntil('the API processes to start', 20_000, 50, async () =>
            childPids(primary).length === processes ? childPids(primary) : undefined,
          )
        : [];
    this.roles.api = [primary, ...children];
  }

  startWorkers(count: number): Proc[] {
    const main = path.join(__dirname, '../../worker/main.js');
    this.workers = Array.from({ length: count }, () => startProc('worker', [...this.profArgs, ...nodeArgs('worker', main)], this.env));
    this.roles.worker = this.workers.map((w) => w.child.pid!);
    return this.workers;
  }

  async stopWorkers(): Promise<void> {
    await Promise.all(this.workers.map((w) => stopProc(w)));
    this.workers = [];
    this.roles.worker = [];
  }

  /** Waits until the workers have applied every queued job; a failed job ends the run. */
  readonly drained = (what: string): Promise<void> => this.queues.drained(what, this.workers);

  snapshot(): CpuSnapshot {
    return cpuSnapshot(this.roles, this.dir, this.redisPort);
  }

  /** Runs `fn` and measures the CPU each role used meanwhile. */
  async measure<T>(fn: () => Promise<T>): Promise<Measured<T>> {
    const forks = await this.redisForks();
    const before = this.snapshot();
    const t0 = performance.now();
    const value = await fn();
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuPercent(before, this.snapshot(), seconds, LOAD_GENERATOR);
    return { value, cpu, seconds, redisForks: (await this.redisForks()) - forks };
  }

  /** Forks Redis has made since it started (INFO stats). */
  private async redisForks(): Promise<number> {
    return Number(/^total_forks:(\d+)/m.exec(await this.redis.info('stats'))?.[1] ?? 0);
  }

  /** Other work on the machine skews every figure: waits (bounded) for a quiet moment; returns the % still busy. */
  settle(): Promise<number> {
    return settleMachine(this.opts.settle);
  }
}
