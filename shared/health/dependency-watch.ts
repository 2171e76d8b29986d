import { isDependencyUnavailable } from '../errors/unavailable';
import type { Logger } from '../logger/logger';
import { DEPENDENCIES, type Dependency, type DependencyProbes, type DependencyStatus } from './readiness';

/** An outage as the watch saw it: since when, what the probe found, and how many failures it cost. */
interface Outage {
  since: number;
  status: Exclude<DependencyStatus, 'ok'>;
  failures: number;
}

export interface DependencyWatchOptions {
  probes: DependencyProbes;
  logger: Logger;
  /** How often a dependency that is down is probed again. */
  intervalMs?: number;
  clock?: () => number;
}

/** What a watch tells its listeners: a dependency went away (with what a probe found), or came back. */
export type DependencyChange = { dependency: Dependency; status: DependencyStatus };

/**
 * Which of Redis and Postgres is away, learned from failures and confirmed by probes
 * (docs/adr/0018-deadlines.md). A request or job that failed on an unreachable dependency calls
 * `failed`; the watch then probes both (at most once per interval) and marks what does not
 * answer as down — one log line — and probes it every interval until it answers again — one
 * log line with the outage's duration. Failures during an outage are only counted: an outage is
 * two lines in the log, however many requests or jobs it failed.
 */
export class DependencyWatch {
  private readonly outages = new Map<Dependency, Outage>();
  private readonly listeners: Array<(change: DependencyChange) => void> = [];
  private readonly waiters: Array<() => void> = [];
  private checking: Promise<void> | null = null;
  private lastCheck = -Infinity;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  /** Outages begun, per dependency, since the process started. */
  readonly outageCounts: Record<Dependency, number> = { redis: 0, postgres: 0 };
  /** Failures reported to the watch (each request answered 503 and each failed job run, whatever the cause proved to be). */
  failures = 0;
  private readonly intervalMs: number;
  private readonly clock: () => number;

  constructor(private readonly o: DependencyWatchOptions) {
    this.intervalMs = o.intervalMs ?? 1000;
    this.clock = o.clock ?? Date.now;
  }

  /** Whether `close` was called: nothing is probed any more, and nobody waits. */
  get closed(): boolean {
    return this.stopped;
  }

  /** Whether any dependency is down now. */
  get anyDown(): boolean {
    return this.outages.size > 0;
  }

  /** The dependency's state as the watch last saw it. */
  status(dependency: Dependency): DependencyStatus {
    return this.outages.get(dependency)?.status ?? 'ok';
  }

  /** Seconds the dependency has been down (0 while it is up). */
  downSeconds(dependency: Dependency): number {
    const outage = this.outages.get(dependency);
    return outage ? (this.clock() - outage.since) / 1000 : 0;
  }

  onChange(listener: (change: DependencyChange) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Reports a failure that looked like an unreachable dependency. Resolves once the watch knows
   * what is down: after a probe of every dependency not already known down — at most one round
   * of probes per interval; a failure between two rounds resolves at once with what the last
   * found. A dependency that answers its probe had a passing fault: no outage, nothing logged.
   */
  failed(error: unknown): Promise<void> {
    this.failures++;
    for (const outage of this.outages.values()) outage.failures++;
    if (this.stopped) return Promise.resolve();
    if (this.checking) return this.checking;
    if (this.clock() - this.lastCheck < this.intervalMs) return Promise.resolve();
    this.lastCheck = this.clock();
    this.checking = this.check(error).finally(() => (this.checking = null));
    return this.checking;
  }

  /** Resolves once no dependency is down. */
  whenAllUp(): Promise<void> {
    if (!this.anyDown || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Stops probing; whoever waits for the dependencies is let go. */
  close(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.releaseWaiters();
  }

  private async check(error: unknown): Promise<void> {
    const unknown = DEPENDENCIES.filter((dependency) => !this.outages.has(dependency));
    const found = await Promise.all(unknown.map(async (dependency) => [dependency, await this.o.probes[dependency]()] as const));
    for (const [dependency, status] of found) if (status !== 'ok') this.down(dependency, status, error);
  }

  private down(dependency: Dependency, status: Outage['status'], error: unknown): void {
    if (this.outages.has(dependency) || this.stopped) return;
    this.outages.set(dependency, { since: this.clock(), status, failures: 1 });
    this.outageCounts[dependency]++;
    this.o.logger.warn(
      { dependency, status, err: error instanceof Error ? error : undefined },
      `${dependency} ${status === 'read-only' ? 'refuses writes' : 'unavailable'}; probing it every ${this.intervalMs} ms`,
    );
    this.emit({ dependency, status });
    this.probeLater(dependency);
  }

  private probeLater(dependency: Dependency): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.o.probes[dependency]().then((status) => {
        if (this.stopped) return;
        const outage = this.outages.get(dependency);
        if (!outage) return;
        if (status !== 'ok') {
          outage.status = status;
          return this.probeLater(dependency);
        }
        this.outages.delete(dependency);
        // At the outage line's level, so whoever sees one sees the other.
        this.o.logger.warn({ dependency, downMs: this.clock() - outage.since, failures: outage.failures }, `${dependency} available again`);
        this.emit({ dependency, status });
        if (!this.anyDown) this.releaseWaiters();
      });
    }, this.intervalMs);
    this.timers.add(timer);
  }

  /** A listener that throws must not keep the outage from ending, nor waiters from being let go. */
  private emit(change: DependencyChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.o.logger.error({ err: error, dependency: change.dependency }, 'a dependency-change listener failed');
      }
    }
  }

  private releaseWaiters(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}

/**
 * The logger for code that warns about its own failed Redis or Postgres calls (the rate
 * limiter, metering, traffic counts, population priors): such a warning — one whose `err` is a
 * dependency being away — is told to the watch instead, which logs the outage once; every other
 * line is logged as given.
 */
export function outageAwareLogger(logger: Logger, watch: Pick<DependencyWatch, 'failed'>): Logger {
  const warn = (fields: unknown, ...rest: unknown[]): void => {
    const error = typeof fields === 'object' && fields !== null ? (fields as { err?: unknown }).err : undefined;
    if (isDependencyUnavailable(error)) return void watch.failed(error);
    (logger.warn as (...args: unknown[]) => void)(fields, ...rest);
  };
  return new Proxy(logger, {
    get(target, property) {
      if (property === 'warn') return warn;
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
