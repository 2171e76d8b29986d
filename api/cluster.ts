import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../shared/logger/logger';
import { serveClusterMetrics } from './cluster-metrics';

/** A child that dies sooner than this after its start counts as a crash loop: restarts back off. */
const STABLE_AFTER_MS = 10_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** How long children get to finish their requests on SIGTERM before they are killed. */
const STOP_GRACE_MS = 15_000;

/**
 * The primary of `API_PROCESSES=N`: forks N API processes sharing one port (node:cluster), and
 * replaces a child that dies — at once, or with a growing delay while children keep dying young.
 * SIGTERM/SIGINT stop every child gracefully, then the primary. All API state that must agree
 * across processes (limits, quotas, caches' versions) lives in Redis and Postgres.
 */
export function runPrimary(processes: number, logger: Logger): void {
  let stopping = false;
  let restartDelay = 0;
  const startedAt = new Map<number, number>();

  const fork = () => {
    const child = cluster.fork();
    startedAt.set(child.id, Date.now());
    return child;
  };
  cluster.on('exit', (child: Worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(child.id) ?? 0);
    startedAt.delete(child.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    restartDelay = lived >= STABLE_AFTER_MS ? 0 : Math.min(MAX_RESTART_DELAY_MS, Math.max(250, restartDelay * 2));
    logger.error({ pid: child.process.pid, code, signal, restartInMs: restartDelay }, 'api process died; starting another');
    setTimeout(() => {
      if (!stopping) fork();
    }, restartDelay).unref();
  });
  serveClusterMetrics(logger);
  for (let i = 0; i < processes; i++) fork();
  logger.info({ processes }, 'api primary started');

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api primary stopping');
    const children = Object.values(cluster.workers ?? {}).filter((child): child is Worker => child !== undefined);
    if (children.length === 0) process.exit(0);
    for (const child of children) child.process.kill('SIGTERM');
    setTimeout(() => {
      for (const child of children) child.process.kill('SIGKILL');
      process.exit(0);
    }, STOP_GRACE_MS).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
