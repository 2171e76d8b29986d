import type { Roles } from './cpu';
import { percentile } from './stats';

/**
 * What one load run measured, and the arithmetic bench:load does on runs: summaries, pooling
 * the rounds of an A/B alternation, the throughput ratio of two sides, and the CPU of pooled
 * rounds. Pure, so it is unit-tested.
 */
export interface LoadRun {
  /** 2xx answers. */
  ok: number;
  non2xx: number;
  /** Connection errors. */
  errors: number;
  /** Requests still unanswered when the run gave up waiting (open-loop runs). */
  timeouts: number;
  /** From the first request to the last answer. */
  seconds: number;
  /** One per 2xx answer (and, in open-loop runs, per timed-out request: the wait so far). */
  latenciesMs: number[];
  statusCodes: Record<string, number>;
  /** Open-loop runs: the most a request left after its due time (the client's own lag). */
  maxSendLagMs?: number;
}

export interface RunSummary {
  rps: number;
  p50: number;
  p99: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
  maxSendLagMs?: number;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export function summarize(run: LoadRun): RunSummary {
  const sorted = Float64Array.from(run.latenciesMs).sort();
  return {
    rps: Math.round(run.ok / Math.max(0.001, run.seconds)),
    p50: round2(percentile(sorted, 50)),
    p99: round2(percentile(sorted, 99)),
    ok: run.ok,
    non2xx: run.non2xx,
    errors: run.errors,
    timeouts: run.timeouts,
    seconds: round2(run.seconds),
    ...(run.maxSendLagMs === undefined ? {} : { maxSendLagMs: round2(run.maxSendLagMs) }),
  };
}

/** Several runs as one: counts and seconds add up, latencies pool (so percentiles span every round). */
export function poolRuns(runs: LoadRun[]): LoadRun {
  const statusCodes: Record<string, number> = {};
  for (const run of runs) for (const [code, n] of Object.entries(run.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const lags = runs.flatMap((run) => (run.maxSendLagMs === undefined ? [] : [run.maxSendLagMs]));
  return {
    ok: runs.reduce((sum, run) => sum + run.ok, 0),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    timeouts: runs.reduce((sum, run) => sum + run.timeouts, 0),
    seconds: runs.reduce((sum, run) => sum + run.seconds, 0),
    latenciesMs: runs.flatMap((run) => run.latenciesMs),
    statusCodes,
    ...(lags.length > 0 ? { maxSendLagMs: Math.max(...lags) } : {}),
  };
}

/**
 * Throughput of `subject` relative to `bare`, each side's rate being its 2xx answers over its
 * seconds summed over every round (the ratio of sums, not a mean of per-round ratios).
 */
export function rateRatio(subject: LoadRun[], bare: LoadRun[]): number {
  const rate = (runs: LoadRun[]) => {
    const pooled = poolRuns(runs);
    return pooled.ok / Math.max(0.001, pooled.seconds);
  };
  const bareRate = rate(bare);
  return bareRate > 0 ? round2(rate(subject) / bareRate) : 0;
}

/** The CPU of several measured rounds as one: each role's percent of a core weighted by the round's length. */
export function poolCpu(rounds: Array<{ cpu: Roles; seconds: number }>): { cpu: Roles; seconds: number } {
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const weighted: Roles = {};
  for (const r of rounds) for (const [role, pct] of Object.entries(r.cpu)) weighted[role] = (weighted[role] ?? 0) + pct * r.seconds;
  const cpu = Object.fromEntries(Object.entries(weighted).map(([role, sum]) => [role, Math.round(sum / Math.max(0.001, seconds))]));
  return { cpu, seconds };
}

/** The steady-load p99 limit: 5 ms, or 1.5 × the bare handler's p99 at the same paced rate when that is more. */
export function steadyP99LimitMs(bareP99Ms: number): number {
  return round2(Math.max(5, 1.5 * bareP99Ms));
}

/** Requests of a run that did not get a 2xx answer. */
export const failures = (s: Pick<RunSummary, 'non2xx' | 'errors' | 'timeouts'>) => s.non2xx + s.errors + s.timeouts;
