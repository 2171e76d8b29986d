import type { WebhookLoadReport } from './webhook-load';
import type { ApplyLag } from './apply-lag';
import type { ColdRound } from './cold-start';
import type { Roles } from './cpu';
import type { NoopRound } from './noop-baseline';
import type { TableSize } from './table-sizes';
import type { WorkerRound } from './worker-backlog';
import { throughputRatio } from './worker-figures';

/** What bench:worker measured (its `--json`), and the readable report of it. */

export interface VsNoop {
  /** Our workers' jobs/s (cold) ÷ the no-op workers' jobs/s. */
  jobsPerSecRatio: number;
  /** Outcomes per job of the backlog: what turns jobs/s into outcomes/s. */
  outcomesPerJob: number;
  /** The no-op's jobs/s × outcomes per job: the outcomes/s of a worker that cost nothing but BullMQ. */
  noopOutcomesPerSec: number;
}

export function vsNoop(cold: Pick<ColdRound, 'jobsPerSec' | 'accepted' | 'jobs'>, noop: Pick<NoopRound, 'jobsPerSec'>): VsNoop {
  const outcomesPerJob = cold.accepted / Math.max(1, cold.jobs);
  return {
    jobsPerSecRatio: throughputRatio(cold.jobsPerSec, noop.jobsPerSec),
    outcomesPerJob: Math.round(outcomesPerJob * 10) / 10,
    noopOutcomesPerSec: Math.round(noop.jobsPerSec * outcomesPerJob),
  };
}

export interface WorkerBenchRound {
  workers: number;
  /** The headline: workers spawned on the backlog, timed from their spawn. */
  cold: ColdRound;
  noop: NoopRound;
  vsNoop: VsNoop;
  applyLag: ApplyLag;
  /** With --warm: on a backlog of its own, the queues paused until the partitions were shared out. */
  warm?: WorkerRound;
}

export interface WorkerBenchResult {
  date: string;
  command: string;
  source: { commit: string; uncommittedFiles: number };
  machine: { cpu: string; cores: number; node: string };
  settings: {
    users: number;
    /** Decisions with outcomes in the tenant's month before the first round. */
    monthRows: number;
    /** Postgres synced with full-page writes, as in production (`--durable`). */
    durable: boolean;
    outcomes: number;
    connections: number;
    batchSize: number;
    concurrency: number;
    queuePartitions: number;
    lagSeconds: number;
    lagRate: number | string;
  };
  rounds: WorkerBenchRound[];
  /** With `--webhooks`: the deliveries run beside the rounds. */
  webhooks: WebhookLoadReport | null;
  /** Bytes per row of the growing tables; none with `--month-rows`, whose rows are mostly the fill's. */
  storage: TableSize[];
}

const list = (roles: Roles) =>
  Object.entries(roles)
    .map(([role, v]) => `${role} ${v}`)
    .join(', ');

export function printWorkerReport(result: WorkerBenchResult): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const { source, machine, settings } = result;
  const commit = `${source.commit}${source.uncommittedFiles > 0 ? ` + ${source.uncommittedFiles} uncommitted files` : ''}`;
  out(`\nsource ${commit}; ${machine.cpu}, ${machine.cores} cores, node ${machine.node}; ${result.date}`);
  out(
    `${settings.users} users${settings.monthRows > 0 ? ` (${settings.monthRows} decisions and outcomes in their month already)` : ''}, ` +
      `${settings.outcomes} outcomes per round posted by ${settings.connections} clients, ` +
      `${settings.queuePartitions} queue partitions, WORKER_CONCURRENCY ${settings.concurrency}${settings.durable ? ', durable Postgres' : ''}\n`,
  );
  for (const r of result.rounds) {
    const { cold, noop, applyLag } = r;
    out(`${r.workers} worker(s), cold (clock from spawn): ${cold.outcomesPerSec} outcomes/s, ${cold.jobsPerSec} jobs/s`);
    out(`  ${cold.accepted} outcomes in ${cold.jobs} jobs (${r.vsNoop.outcomesPerJob} per job), ${cold.seconds} s`);
    out(
      `  exactly once: ${cold.check.exactlyOnce} (rows ${cold.check.applied}, interactions ${cold.check.interactions}, ` +
        `versions ${cold.check.versions}, failed ${cold.check.failed}, delayed ${cold.check.delayed})`,
    );
    out(`  CPU ms per outcome: ${list(cold.cpuMsPerOutcome)}`);
    out(
      `  each worker: ${cold.perWorker.map((w, i) => `worker ${i + 1} ${w.cpuMsPerOutcome} ms (${w.cpuPercentOfOneCore}% of a core)`).join(', ')}`,
    );
    out(`  % of a core: ${list(cold.cpuPercentOfOneCore)}; busiest: ${cold.busiest.process} at ${cold.busiest.cpuPercentOfOneCore}%`);
    out(`  worker RSS after: ${cold.rssAfter.perProcessMiB.map((mib) => `${mib} MiB`).join(', ')}`);
    out(
      `  no-op BullMQ worker(s): ${noop.jobsPerSec} jobs/s (${r.vsNoop.noopOutcomesPerSec} outcomes/s at ${r.vsNoop.outcomesPerJob} per job) ` +
        `against ours ${cold.jobsPerSec} jobs/s (${cold.outcomesPerSec} outcomes/s): ours ÷ no-op ${r.vsNoop.jobsPerSecRatio}`,
    );
    out(
      `    ${noop.processes} process(es), concurrency ${noop.concurrency}, ${noop.jobs} jobs of ${noop.jobBytes} bytes, ${noop.seconds} s, failed ${noop.failed}`,
    );
    out(`    its CPU ms per job: ${list(noop.cpuMsPerJob)}`);
    out(
      `  apply lag at ${applyLag.rate} outcomes/s for ${applyLag.seconds} s: p50 ${applyLag.lag.p50Ms} ms, p99 ${applyLag.lag.p99Ms} ms, ` +
        `max ${applyLag.lag.maxMs} ms (${applyLag.lag.count} outcomes, ${applyLag.missing} missing); ` +
        `posts p50 ${applyLag.posts.p50} ms, p99 ${applyLag.posts.p99} ms, ${applyLag.posts.non2xx + applyLag.posts.errors + applyLag.posts.timeouts} failed`,
    );
    if (r.warm) {
      const w = r.warm;
      out(
        `  warm (own backlog, clock from resume): ${w.outcomesPerSec} outcomes/s (${w.accepted} in ${w.jobs} jobs, ${w.seconds} s), ` +
          `exactly once: ${w.check.exactlyOnce}; CPU ms per outcome: ${list(w.cpuMsPerOutcome)}`,
      );
    }
  }
  if (result.webhooks) {
    const w = result.webhooks;
    out(
      `webhooks on: ${w.eventsRecorded} events recorded, ${w.requestsReceived} deliveries received, the receiver answering after ${w.receiverDelayMs} ms`,
    );
  }
  if (result.storage.length > 0)
    out(`\nstorage: ${result.storage.map((s) => `${s.table} ${s.rows} rows, ${s.bytesPerRow ?? '-'} bytes/row`).join('; ')}`);
}
