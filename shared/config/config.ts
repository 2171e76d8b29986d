import { isIP } from 'node:net';
import { z } from 'zod';
import { durationMs } from './duration';
import { ENVIRONMENTS } from '../domain/environment';

/**
 * Event-queue partitions unless QUEUE_PARTITIONS says otherwise, on one node as on a cluster:
 * the live workers share them out, so a worker beyond this many has none
 * (docs/adr/0015-worker-partition-ownership.md).
 */
export const DEFAULT_QUEUE_PARTITIONS = 8;

const DEV_SECRET = 'cos-development-secret-do-not-use-in-production';
/** The worker's /metrics port unless METRICS_PORT says otherwise (the Prometheus exporters' usual one). */
export const DEFAULT_METRICS_PORT = 9464;

/** The address the HTTP listeners bind unless HOST says otherwise: this machine only. */
export const DEFAULT_HOST = '127.0.0.1';

/** A comma-separated variable as its non-empty, trimmed parts. */
const commaList = z.string().transform((text) =>
  text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean),
);

const environmentList = commaList.pipe(z.array(z.enum(ENVIRONMENTS)).min(1));

const SECOND = 1000;
const HOUR = 3_600_000;
/** 5s, 30s, 2m, 10m, 30m, 1h, 2h, 4h, 8h, 12h, 16h, 24h: the last retry about 2.8 days after the first attempt. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [
  5 * SECOND,
  30 * SECOND,
  120 * SECOND,
  600 * SECOND,
  1800 * SECOND,
  HOUR,
  2 * HOUR,
  4 * HOUR,
  8 * HOUR,
  12 * HOUR,
  16 * HOUR,
  24 * HOUR,
];

/** An IPv4 or IPv6 address, with or without a /prefix length. */
const cidr = z.string().refine(
  (text) => {
    const [address, prefix, ...rest] = text.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || rest.length > 0) return false;
    if (prefix === undefined) return true;
    return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
  },
  { message: 'each entry must be an IP address or a CIDR such as 127.0.0.1/32 or fd00::/8' },
);

/** `host:port` as its parts. */
const hostPort = (node: string) => ({ host: node.slice(0, node.lastIndexOf(':')), port: Number(node.slice(node.lastIndexOf(':') + 1)) });

const common = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('production'),
  DATABASE_URL: z.string().url(),
  /** One Redis node; or, instead, a Redis Cluster's seed nodes (docs/OPERATIONS.md). */
  REDIS_URL: z.string().url().optional(),
  REDIS_CLUSTER_NODES: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean),
    )
    .pipe(
      z
        .array(z.string().regex(/^[^:\s]+:\d{1,5}$/, 'each node must be host:port'))
        .min(1)
        .transform((nodes) => nodes.map(hostPort)),
    )
    .optional(),
  /**
   * Where each cluster node is reached when that differs from the address it announces (behind
   * NAT, in containers): `announced=reachable` pairs of `host:port`, comma-separated.
   */
  REDIS_CLUSTER_NAT_MAP: commaList
    .pipe(z.array(z.string().regex(/^[^:\s=]+:\d{1,5}=[^:\s=]+:\d{1,5}$/, 'each entry must be host:port=host:port')))
    .transform((entries) =>
      Object.fromEntries(entries.map((entry) => entry.split('=') as [string, string]).map(([from, to]) => [from, hostPort(to)])),
    )
    .optional(),
  /** The ACL user and password of every cluster node (one node's go in REDIS_URL). */
  REDIS_CLUSTER_USERNAME: z.string().min(1).optional(),
  REDIS_CLUSTER_PASSWORD: z.string().min(1).optional(),
  /**
   * Event-queue partitions, 8 unless set: shared out over the live workers, and on a cluster
   * spread over its masters (docs/adr/0015-worker-partition-ownership.md).
   */
  QUEUE_PARTITIONS: z.coerce.number().int().min(1).max(256).default(DEFAULT_QUEUE_PARTITIONS),
  COS_SECRET: z.string().min(16).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  OUTCOME_WINDOW: durationMs.default(7 * 86_400_000),
  /** Prefix of every BullMQ and cache key; tests give each file its own. */
  COS_REDIS_PREFIX: z
    .string()
    .regex(/^[a-z0-9_-]+$/i)
    .default('cos'),
  /**
   * Proxies whose X-Forwarded-For is believed (comma-separated addresses or CIDRs, or Express's
   * names such as `loopback`); unset, the client is the socket's peer.
   */
  TRUST_PROXY: commaList.optional(),
};

/**
 * The address the process's HTTP listener binds: loopback unless set, so that a service started
 * on a shared or public machine is not reachable from the network until an operator says so
 * (`0.0.0.0` or `::` for every interface, behind a proxy or firewall; containers need it).
 */
const listenHost = z
  .string()
  .trim()
  // Digits and dots only would pass as a host name, but are a mistyped IPv4 address.
  .refine((host) => isIP(host) !== 0 || (!/^[\d.]+$/.test(host) && z.hostname().safeParse(host).success), {
    message: 'must be an IP address or a host name to listen on, e.g. 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)',
  })
  .default(DEFAULT_HOST);

/**
 * The longest any request waits for Redis or Postgres: past it the answer is 503 with
 * Retry-After, whatever hangs (docs/adr/0018-deadlines.md).
 */
const requestDeadline = durationMs.pipe(z.number().min(100).max(60_000)).default(2000);

/** When set, GET /metrics of the api and the worker requires it as a Bearer token. */
const adminToken = z.string().min(16).optional();

const apiSchema = z.object({
  ...common,
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: listenHost,
  SERVE_ENVIRONMENTS: environmentList.default(['test', 'live']),
  ADMIN_TOKEN: adminToken,
  REQUEST_DEADLINE: requestDeadline,
  /** How long a POST's Idempotency-Key replays its first response (docs/API.md#idempotent-requests). */
  IDEMPOTENCY_WINDOW: durationMs
    .pipe(
      z
        .number()
        .min(1000)
        .max(7 * 86_400_000),
    )
    .default(3_600_000),
  /** How often each API instance checks Postgres for changed keys/accounts. */
  KEY_REFRESH_INTERVAL: durationMs.default(1000),
  /** API processes on this host sharing PORT (node:cluster); limits stay exact across them. */
  API_PROCESSES: z.coerce.number().int().min(1).max(64).default(1),
  /**
   * Replicas that must hold each enqueued batch of decisions or outcomes before its requests are
   * answered (Redis WAIT); 0 answers once the master has it (docs/SCALING.md#redis).
   */
  REDIS_WAIT_REPLICAS: z.coerce.number().int().min(0).max(5).default(0),
  /** The longest that wait lasts; past it the requests are answered anyway. */
  REDIS_WAIT_TIMEOUT: durationMs.default(100),
});

const workerSchema = z
  .object({
    ...common,
    /**
     * Jobs a worker holds at once, shared out over the partitions it consumes. A job carries up
     * to 256 decisions or outcomes, far fewer when the API is not busy and its turn's events are
     * split over the partitions: enough jobs to keep a few full batches in hand at moderate load
     * (docs/BENCHMARKS.md, worker section).
     */
    WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(10_000).default(4096),
    /**
     * Most decisions and outcomes applied in one Postgres transaction. A large batch applies
     * several outcomes of each user at once: the user's state is read, written and cached once.
     */
    WORKER_BATCH_SIZE: z.coerce.number().int().min(1).max(5000).default(5000),
    /** How often metered usage is moved from Redis to Postgres. */
    USAGE_FLUSH_INTERVAL: durationMs.default(10_000),
    /** A failed job's first retry waits this long, each later one twice as long… */
    JOB_RETRY_DELAY: durationMs.default(1000),
    /** …up to this, and jobs are retried until they succeed (shared/jobs/retry.ts). */
    JOB_RETRY_MAX_DELAY: durationMs.default(30_000),
    /** How often a worker tells the others it is alive and learns which partitions are its own. */
    WORKER_HEARTBEAT_INTERVAL: durationMs.default(1000),
    /**
     * A worker not heard from for this long is taken for dead and its partitions go to the others
     * (its held jobs come back through BullMQ's stalled-job check).
     */
    WORKER_HEARTBEAT_TIMEOUT: durationMs.default(5000),
    /**
     * The worker process's CPU niceness (0–19). Its work can wait a few milliseconds, an API
     * answer on the same host cannot: above 0, the API is scheduled first whenever both want a
     * core. No effect on a host of its own.
     */
    WORKER_NICE: z.coerce.number().int().min(0).max(19).default(10),
    /**
     * On SIGTERM the worker applies the batches it holds, then exits; if that takes longer than
     * this (Redis or Postgres unreachable, say), it exits 1 anyway: what it held is taken over by
     * the other workers, or by itself once restarted, and applied once.
     */
    WORKER_DRAIN_TIMEOUT: durationMs.default(20_000),
    /** Port of the worker's /metrics, /healthz and /readyz listener; 0 turns it off. */
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(DEFAULT_METRICS_PORT),
    /** Webhook deliveries a worker attempts at once, on the webhooks queue's own BullMQ Worker. */
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16),
    /** How often the outbox relay turns new events into deliveries. */
    WEBHOOK_RELAY_INTERVAL: durationMs.default(1000),
    /**
     * The waits before each retry of a failed delivery, comma-separated durations: by default
     * 12 retries over about 2.8 days, growing about exponentially (seconds in tests).
     */
    WEBHOOK_RETRY_SCHEDULE: commaList.pipe(z.array(durationMs).min(1).max(50)).default(DEFAULT_WEBHOOK_RETRY_SCHEDULE),
    /** An endpoint failing this long (time the worker was paused not counted) is disabled. */
    WEBHOOK_DISABLE_AFTER: durationMs.default(3 * 86_400_000),
    /** A delivery's whole request — connection, headers and body — within this, or it failed. */
    WEBHOOK_TIMEOUT: durationMs.pipe(z.number().max(60_000)).default(10_000),
    /**
     * Addresses deliveries may reach although they are private, loopback or link-local
     * (comma-separated addresses or CIDRs, e.g. 127.0.0.1/32 or 10.1.0.0/16); none by default.
     */
    WEBHOOK_ALLOWED_ADDRESSES: commaList.pipe(z.array(cidr)).default([]),
    /** Delivery log rows and relayed outbox events are deleted this long after they were written. */
    WEBHOOK_RETENTION: durationMs.default(30 * 86_400_000),
    /** The address of that listener (as the API's and the dashboard's). */
    HOST: listenHost,
    ADMIN_TOKEN: adminToken,
  })
  .refine((config) => config.JOB_RETRY_MAX_DELAY >= config.JOB_RETRY_DELAY, {
    message: 'JOB_RETRY_MAX_DELAY must not be shorter than JOB_RETRY_DELAY',
    path: ['JOB_RETRY_MAX_DELAY'],
  })
  // One late heartbeat must not make a live worker look dead.
  .refine((config) => config.WORKER_HEARTBEAT_TIMEOUT >= 2 * config.WORKER_HEARTBEAT_INTERVAL, {
    message: 'WORKER_HEARTBEAT_TIMEOUT must be at least twice WORKER_HEARTBEAT_INTERVAL',
    path: ['WORKER_HEARTBEAT_TIMEOUT'],
  });

const dashboardSchema = z.object({
  ...common,
  DASHBOARD_PORT: z.coerce.number().int().min(0).max(65535).default(3001),
  HOST: listenHost,
  /**
   * `true` behind TLS: the cookies are then sent over HTTPS only and named `__Host-…`, and every
   * response carries Strict-Transport-Security.
   */
  DASHBOARD_SECURE_COOKIES: z
    .enum(['true', 'false'])
    .default('false')
    .transform((value) => value === 'true'),
  /** A session unused this long ends (each request starts the period again). */
  DASHBOARD_SESSION_IDLE: durationMs.default(12 * 3_600_000),
  /**
   * A session ends this long after its sign-in, however active: a stolen cookie, or a browser
   * left signed in, is not good for ever.
   */
  DASHBOARD_SESSION_MAX_AGE: durationMs.default(7 * 86_400_000),
  REQUEST_DEADLINE: requestDeadline,
  /**
   * The dashboard process's CPU niceness (0–19), as WORKER_NICE: on a host shared with an API
   * it yields the CPU to the API's hot path, e.g. under a flood of sign-ins
   * (docs/adr/0017-sign-in-throttle.md).
   */
  DASHBOARD_NICE: z.coerce.number().int().min(0).max(19).default(19),
});

const cliSchema = z.object({ ...common });

export type ApiConfig = Parsed<typeof apiSchema>;
export type WorkerConfig = Parsed<typeof workerSchema>;
export type CliConfig = Parsed<typeof cliSchema>;
export type DashboardConfig = Parsed<typeof dashboardSchema>;

export class ConfigError extends Error {}

type Parsed<S extends z.ZodType> = z.infer<S> & { COS_SECRET: string };

function parse<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): Parsed<S> {
  // An empty variable counts as unset (PORT= must not mean port 0).
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const result = schema.safeParse(given);
  const issues = result.success ? [] : result.error.issues.map((issue) => `  ${issue.path.join('.') || '(env)'}: ${issue.message}`);
  const nodeEnv = given.NODE_ENV ?? 'production';
  if (!given.COS_SECRET && nodeEnv === 'production') {
    issues.push('  COS_SECRET: required when NODE_ENV is production (at least 16 characters)');
  }
  if (!given.REDIS_URL && !given.REDIS_CLUSTER_NODES) issues.push('  REDIS_URL: required unless REDIS_CLUSTER_NODES is set');
  if (!result.success || issues.length > 0) throw new ConfigError(`invalid configuration:\n${issues.join('\n')}`);
  const config = result.data as z.infer<S> & { COS_SECRET?: string };
  // Development and test runs without a secret get a fixed, clearly non-production one.
  config.COS_SECRET ??= DEV_SECRET;
  return config as Parsed<S>;
}

export const loadApiConfig = (env: NodeJS.ProcessEnv = process.env): ApiConfig => parse(apiSchema, env);
export const loadWorkerConfig = (env: NodeJS.ProcessEnv = process.env): WorkerConfig => parse(workerSchema, env);
export const loadDashboardConfig = (env: NodeJS.ProcessEnv = process.env): DashboardConfig => parse(dashboardSchema, env);
export const loadCliConfig = (env: NodeJS.ProcessEnv = process.env): CliConfig => parse(cliSchema, env);

/** For process entrypoints: the config, or every problem on stderr and exit code 1. */
export function configOrExit<C>(load: () => C): C {
  try {
    return load();
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
