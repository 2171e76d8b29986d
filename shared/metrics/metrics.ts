import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CHECK_TIMEOUT_MS, DEPENDENCIES, settleWithin, type Readiness } from '../health/readiness';
import type { DependencyWatch } from '../health/dependency-watch';

/**
 * Every Prometheus metric of the api and the worker, defined here by name (their meaning is
 * listed in docs/OPERATIONS.md#metrics). Each process has its own registry with Node's default
 * process metrics; label values come from fixed sets only.
 */

function processRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * A counter over a fixed set of label values kept as plain numbers and handed to Prometheus at
 * scrape time: the request path increments a field, without prom-client's per-call label
 * hashing and allocations.
 */
function tallyCounter<V extends string>(
  registry: Registry,
  spec: { name: string; help: string; label: string; values: readonly V[] },
): Record<V, number> {
  const counts = Object.fromEntries(spec.values.map((value) => [value, 0])) as Record<V, number>;
  new Counter({
    name: spec.name,
    help: spec.help,
    labelNames: [spec.label],
    registers: [registry],
    collect() {
      this.reset();
      for (const value of spec.values) this.inc({ [spec.label]: value }, counts[value]);
    },
  });
  return counts;
}

/** 1 or 0 per dependency, from the same checks as GET /readyz, run at each scrape. */
function dependencyGauge(registry: Registry, readiness: () => Promise<Readiness>): void {
  new Gauge({
    name: 'cos_dependency_up',
    help: 'Whether this process reaches the dependency at scrape time (Redis PING, a writable Postgres): 1 yes, 0 no',
    labelNames: ['dependency'],
    registers: [registry],
    // Summed over API_PROCESSES children, a down dependency must still read 0.
    aggregator: 'min',
    async collect() {
      const { checks } = await readiness();
      this.set({ dependency: 'redis' }, checks.redis === 'ok' ? 1 : 0);
      this.set({ dependency: 'postgres' }, checks.postgres === 'ok' ? 1 : 0);
    },
  });
}

/** The outages a process's dependency watch saw: how many began, and how long the current one lasts. */
export function dependencyOutageMetrics(registry: Registry, watch: DependencyWatch): void {
  new Counter({
    name: 'cos_dependency_outages_total',
    help: 'Outages of a dependency this process saw begin (a failure confirmed by a probe), by dependency',
    labelNames: ['dependency'],
    registers: [registry],
    collect() {
      this.reset();
      for (const dependency of DEPENDENCIES) this.inc({ dependency }, watch.outageCounts[dependency]);
    },
  });
  new Counter({
    name: 'cos_dependency_failures_total',
    help: 'Failures reported to the dependency watch: requests answered 503 and job runs that met an unreachable Redis or Postgres',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(watch.failures);
    },
  });
  new Gauge({
    name: 'cos_dependency_down_seconds',
    help: 'How long the dependency has been down as this process sees it; 0 while it answers',
    labelNames: ['dependency'],
    registers: [registry],
    aggregator: 'max',
    collect() {
      for (const dependency of DEPENDENCIES) this.set({ dependency }, watch.downSeconds(dependency));
    },
  });
}

export type RateLimitScope = 'second' | 'month';
/** How a live request was admitted: on a slot its API process leased, or checked in Redis on its own. */
export type AdmissionWay = 'leased' | 'checked';

/** The API's metrics; `registry` is what GET /metrics serves. */
export class ApiMetrics {
  readonly registry = processRegistry();
  private readonly requestDuration = new Histogram({
    name: 'cos_http_request_duration_seconds',
    help: 'Time from a request reaching the API to its response being sent, by route name and status code',
    labelNames: ['route', 'status_code'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  /** The histogram's series by route, then status code, made on first use. */
  private readonly durationSeries = new Map<string, Array<Histogram.Internal<'route' | 'status_code'>>>();
  private readonly rejections = tallyCounter(this.registry, {
    name: 'cos_rate_limit_rejections_total',
    help: 'Live requests refused with 429, by the limit they exceeded: the per-second limit or the monthly quota',
    label: 'scope',
    values: ['second', 'month'],
  });
  private readonly admissions = tallyCounter(this.registry, {
    name: 'cos_rate_limit_admissions_total',
    help: 'Live requests the rate limiter let through: on a slot this process leased for the key, or checked in Redis on their own',
    label: 'way',
    values: ['leased', 'checked'],
  });
  private readonly profileCacheReads = tallyCounter(this.registry, {
    name: 'cos_profile_cache_reads_total',
    help: 'Profile reads of context calls and profile GETs, by whether the Redis cache had the profile',
    label: 'result',
    values: ['hit', 'miss'],
  });
  private readonly outcomesAccepted = tallyCounter(this.registry, {
    name: 'cos_outcomes_accepted_total',
    help: 'Outcomes answered 202 (enqueued), by whether this was the first post of the requestId or a retry of it',
    label: 'delivery',
    values: ['first', 'retry'],
  });

  constructor(readiness: () => Promise<Readiness>) {
    dependencyGauge(this.registry, readiness);
  }

  /** Decisions waiting to be logged, and those never logged (docs/adr/0010-group-commit.md), read at scrape time. */
  watchDecisionLog(log: { held: number; dropped: number }): void {
    new Gauge({
      name: 'cos_decisions_unsent',
      help: 'Decisions answered whose log batch is not in Redis yet (waiting to be sent, or being retried)',
      registers: [this.registry],
      collect() {
        this.set(log.held);
      },
    });
    new Counter({
      name: 'cos_decisions_unlogged_total',
      help: 'Decisions answered but never logged for offline evaluation (the log was full, or Redis refused it at shutdown); their outcomes are still applied',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(log.dropped);
      },
    });
  }

  /** Requests answered 503 at their deadline, read at scrape time. */
  watchDeadlines(deadlines: { expired: number }): void {
    // The app of these dependencies may be made again (tests do): the latest one's is counted.
    this.registry.removeSingleMetric('cos_http_deadlines_passed_total');
    new Counter({
      name: 'cos_http_deadlines_passed_total',
      help: 'Requests answered 503 because they were not answered within REQUEST_DEADLINE (a dependency hung, or the process was overloaded)',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(deadlines.expired);
      },
    });
  }

  /** `route` is a name from the route table (or `unmatched`), never a raw path. */
  observeRequest(route: string, statusCode: number, seconds: number): void {
    let byStatus = this.durationSeries.get(route);
    if (!byStatus) this.durationSeries.set(route, (byStatus = []));
    (byStatus[statusCode] ??= this.requestDuration.labels(route, String(statusCode))).observe(seconds);
  }

  rateLimitRejected(scope: RateLimitScope): void {
    this.rejections[scope]++;
  }

  rateLimitAdmitted(way: AdmissionWay): void {
    this.admissions[way]++;
  }

  profileCacheRead(hit: boolean): void {
    this.profileCacheReads[hit ? 'hit' : 'miss']++;
  }

  outcomeAccepted(retry: boolean): void {
    this.outcomesAccepted[retry ? 'retry' : 'first']++;
  }
}

const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed', 'failed'] as const;

/** The worker's metrics; `registry` is what its GET /metrics serves. */
export class WorkerMetrics {
  readonly registry = processRegistry();
  private readonly outcomesApplied = new Counter({
    name: 'cos_worker_outcomes_applied_total',
    help: 'Outcomes applied to profiles by this worker, counted when their batch committed (a retried outcome found applied is not counted again)',
    registers: [this.registry],
  });
  private readonly applyLag = new Histogram({
    name: 'cos_worker_outcome_apply_lag_seconds',
    help: 'From an outcome accepted by the API (202) to the commit of the batch that applied it',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [this.registry],
  });
  private readonly batchSize = new Histogram({
    name: 'cos_worker_batch_size',
    help: 'Decisions and outcomes applied per committed Postgres transaction',
    buckets: [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
    registers: [this.registry],
  });
  private readonly jobsFailed = new Counter({
    name: 'cos_worker_jobs_failed_total',
    help: 'Job attempts that failed in this worker, by queue and whether it was the last attempt (final="true": moved to the failed set)',
    labelNames: ['queue', 'final'],
    registers: [this.registry],
  });
  private readonly usageFlushRuns = new Counter({
    name: 'cos_worker_usage_flush_runs_total',
    help: 'Usage flushes (Redis counts into usage_daily) run by this worker, by result',
    labelNames: ['result'],
    registers: [this.registry],
  });
  private readonly webhookAttempts = new Counter({
    name: 'cos_worker_webhook_deliveries_total',
    help: 'Webhook delivery attempts made by this worker, by outcome (succeeded: a 2xx answer; failed: anything else, retried on its schedule)',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly webhookLatency = new Histogram({
    name: 'cos_worker_webhook_delivery_seconds',
    help: "A webhook delivery attempt's time, from its request to the receiver's answer (or the time-out)",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  private readonly partitionsOwned = new Gauge({
    name: 'cos_worker_partitions_owned',
    help: 'Event-queue partitions this worker consumes now (its share of QUEUE_PARTITIONS over the live workers)',
    registers: [this.registry],
  });
  private readonly groupMembers = new Gauge({
    name: 'cos_worker_group_members',
    help: 'Live workers this worker counted at its last change of assignment, itself included',
    registers: [this.registry],
  });

  constructor(queues: readonly Queue[], readiness: () => Promise<Readiness>) {
    dependencyGauge(this.registry, readiness);
    // Every series exists from the start, so rates and alerts see a 0 before the first event.
    for (const queue of queues) for (const final of ['true', 'false']) this.jobsFailed.inc({ queue: queue.name, final }, 0);
    // A partitioned queue (docs/adr/0014-redis-cluster-partitions.md) reports its partitions' sum.
    for (const result of ['ok', 'error']) this.usageFlushRuns.inc({ result }, 0);
    for (const outcome of ['succeeded', 'failed']) this.webhookAttempts.inc({ outcome }, 0);
    new Gauge({
      name: 'cos_queue_jobs',
      help: 'BullMQ jobs in each queue by state (a batch job carries many decisions or outcomes), read from Redis at scrape time; every worker reports the same shared queues',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
      async collect() {
        this.reset();
        // While Redis is away the series are left out rather than the scrape failing.
        const counts = await Promise.all(queues.map((queue) => settleWithin(queue.getJobCounts(...QUEUE_STATES), CHECK_TIMEOUT_MS)));
        const sums = new Map<string, number>();
        queues.forEach((queue, index) => {
          for (const state of QUEUE_STATES) {
            const count = counts[index]?.[state];
            if (count !== undefined) sums.set(`${queue.name}\u0000${state}`, (sums.get(`${queue.name}\u0000${state}`) ?? 0) + count);
          }
        });
        for (const [series, count] of sums) {
          const [queue, state] = series.split('\u0000');
          this.set({ queue, state }, count);
        }
      },
    });
  }

  /** A webhook delivery attempt ended. */
  webhookAttempted(outcome: 'succeeded' | 'failed', latencyMs: number): void {
    this.webhookAttempts.inc({ outcome });
    this.webhookLatency.observe(latencyMs / 1000);
  }

  /**
   * A batch committed in Postgres: its size, and for each outcome it newly applied (`applied`,
   * by requestId) the time from its acceptance (`receivedAt`) to `committedAt`.
   */
  batchCommitted(
    batch: ReadonlyArray<{ data: { requestId: string; receivedAt?: number } }>,
    applied: ReadonlySet<string>,
    committedAt: number,
  ): void {
    this.batchSize.observe(batch.length);
    const lags = new Map<string, number>();
    for (const { data } of batch) {
      if (data.receivedAt !== undefined && applied.has(data.requestId)) lags.set(data.requestId, committedAt - data.receivedAt);
    }
    for (const lag of lags.values()) this.applyLag.observe(Math.max(0, lag) / 1000);
    this.outcomesApplied.inc(lags.size);
  }

  jobFailed(queue: string, final: boolean): void {
    this.jobsFailed.inc({ queue, final: String(final) });
  }

  /** This worker now consumes `owned` partitions, shared out over `members` live workers. */
  partitionsAssigned(owned: number, members: number): void {
    this.partitionsOwned.set(owned);
    this.groupMembers.set(members);
  }

  usageFlushRun(ok: boolean): void {
    this.usageFlushRuns.inc({ result: ok ? 'ok' : 'error' });
  }
}
