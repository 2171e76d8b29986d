import type { IdempotencyMemory } from './idempotency-memory';
import type { AbResult, SideResult } from './ab';
import type { ApiProcessesPhase } from './api-processes-phase';
import type { ContextPhases } from './context-phase';
import { failures } from './load-stats';
import type { Target } from './load-targets';
import type { Rss } from './memory';
import type { OutcomePhase } from './outcome-phase';
import type { WorkerRound } from './worker-backlog';
import type { WorkerPhase } from './worker-phase';

/** bench:load's result (the --json object) and its printed form. */

export interface LoadResult {
  date: string;
  command: string;
  source: { commit: string; uncommittedFiles: number };
  machine: { cpu: string; cores: number; memoryGiB: number; node: string; os: string; busyWithOtherWorkAtStartPercent: number };
  settings: {
    durationS: number;
    warmupS: number;
    rounds: number;
    connections: number;
    pipelining: 1;
    users: number;
    workers: number;
    compareWorkers: number;
    steadyRate: number;
    apiProcesses: number;
    /** Whether every POST carried an Idempotency-Key of its own. */
    idempotencyKeys: boolean;
  };
  context: ContextPhases;
  outcome: OutcomePhase;
  /** Null in a run without keys (`--without-idempotency-keys`). */
  idempotency: IdempotencyMemory | null;
  worker: WorkerPhase;
  apiProcesses: ApiProcessesPhase;
  targets: Target[];
  allPass: boolean;
}

const out = (text = '') => process.stdout.write(`${text}\n`);
const columns = (widths: number[], ...cells: Array<string | number>) =>
  out(cells.map((cell, i) => String(cell).padEnd(widths[i] ?? 10)).join(''));
const mib = (r: Rss) => `${r.totalMiB} MiB${r.perProcessMiB.length > 1 ? ` (${r.perProcessMiB.join(' + ')})` : ''}`;

function abRows(label: string, subject: string, ab: AbResult, withRatio = true): void {
  const widths = [34, 26, ...ab.roundRatios.map(() => 10), 10, 9, 9, 8];
  const row = (name: string, side: SideResult) =>
    columns(
      widths,
      name === 'bare Express' ? label : '',
      name,
      ...side.rounds.map((r) => r.rps),
      side.all.rps,
      side.all.p50,
      side.all.p99,
      failures(side.all),
    );
  row('bare Express', ab.bare);
  row(subject, ab.subject);
  if (withRatio) columns(widths, '', 'ratio', ...ab.roundRatios, ab.ratio, '', '', ab.noisy ? 'noisy' : '');
}

function workerLine(round: WorkerRound): void {
  const c = round.check;
  out(
    `  ${round.workers} worker(s): ${round.outcomesPerSec} outcomes/s (${round.accepted} outcomes in ${round.jobs} jobs, ${round.seconds} s); ` +
      `rows ${c.applied}, interactions ${c.interactions}, versions ${c.versions}, failed ${c.failed} → exactly once: ${c.exactlyOnce}`,
  );
}

const costLine = (name: string, cost: SideResult['cpuCost'] | { cpuMsPerItem: Record<string, number> }) => {
  const total = 'totalCpuMs' in cost ? cost.totalCpuMs : Object.values(cost.cpuMsPerItem).reduce((sum, ms) => sum + ms, 0);
  const parts = Object.entries(cost.cpuMsPerItem).map(([role, ms]) => `${role} ${ms}`);
  out(`  ${name.padEnd(44)}${String(Math.round(total * 1000) / 1000).padEnd(8)}${parts.join(', ')}`);
};

export function printReport(r: LoadResult): void {
  const s = r.settings;
  out(`\nmachine: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGiB} GiB, node ${r.machine.node}, ${r.machine.os}`);
  out(
    `source: ${r.source.commit} + ${r.source.uncommittedFiles} uncommitted files; busy with other work at start: ${r.machine.busyWithOtherWorkAtStartPercent}%`,
  );
  out(`date: ${r.date}; ${s.rounds} rounds of bare and subject in turn, ${s.durationS} s each, ${s.connections} connections, pipelining 1`);
  out(`api: 1 process (API_PROCESSES=${s.apiProcesses} at the end), ${s.workers} worker(s), ${s.users} cached users\n`);

  const rounds = r.context.testKey.roundRatios.map((_, i) => `round ${i + 1}`);
  columns([34, 26, ...rounds.map(() => 10), 10, 9, 9, 8], 'req/s (closed loop)', '', ...rounds, 'all', 'p50 ms', 'p99 ms', 'failed');
  abRows('context, test key', 'POST /v1/context', r.context.testKey);
  abRows('context, live key', 'POST /v1/context (live)', r.context.liveKey);
  abRows('outcome, worker stopped', 'POST /v1/outcome', r.outcome);
  abRows(`API_PROCESSES=${r.apiProcesses.processes}`, 'POST /v1/context', r.apiProcesses);

  const h = r.context.steadyLoad;
  out(`\nopen loop at ${h.rate} req/s (latency from each request's scheduled time):`);
  abRows('steady load', 'POST /v1/context', h, false);
  out(
    `  p99 limit max(5, 1.5 × bare p99 ${h.bare.all.p99}) = ${h.p99LimitMs} ms; client's worst send lag ${h.subject.all.maxSendLagMs ?? 0} ms`,
  );

  out('\nworker, on an outcome backlog made through the API:');
  workerLine(r.worker.headline);
  out('  on two more backlogs made alike (the comparison):');
  workerLine(r.worker.baseline);
  workerLine(r.worker.comparison);

  const m = r.idempotency;
  if (m === null) out('\nno Idempotency-Key on the POSTs (--without-idempotency-keys)');
  else
    out(
      `\nidempotency records (every POST carried a key): ${m.records} records, ${m.bytesPerRecord} B each + ${m.indexBytesPerRecord} B of index = ${m.mbPerMillionRequests} MiB per million keyed requests`,
    );

  out('\nRSS at the end of the load phases:');
  out(`  api after the context phases ${mib(r.context.rssAfter.api)}, after the outcome phase ${mib(r.outcome.rssAfter.api)}`);
  out(`  worker(s) after the context phases ${mib(r.context.rssAfter.workers)}, after their backlog ${mib(r.worker.rssAfter.headline)}`);
  out(`  ${r.worker.comparison.workers} workers after their backlog ${mib(r.worker.rssAfter.comparison)}`);
  out(`  api with API_PROCESSES=${r.apiProcesses.processes} (primary + processes) ${mib(r.apiProcesses.rssAfter)}\n`);

  for (const t of r.targets)
    columns(
      [62, 12, 16],
      t.name,
      t.measured,
      `target ${t.target}`,
      `${t.pass ? 'PASS' : 'FAIL'}${t.noisy ? ' (noisy: other work ran)' : ''}`,
    );

  out('\nCPU ms per request (per outcome for the worker), all rounds of a phase: total, then by process');
  const phases: Array<[string, AbResult]> = [
    ['context (test key)', r.context.testKey],
    ['context (live key)', r.context.liveKey],
    ['steady load', h],
    ['outcome', r.outcome],
    [`API_PROCESSES=${r.apiProcesses.processes}`, r.apiProcesses],
  ];
  for (const [name, ab] of phases) {
    costLine(`${name}: bare`, ab.bare.cpuCost);
    costLine(`${name}: subject`, ab.subject.cpuCost);
  }
  costLine(`worker (${r.worker.headline.workers})`, { cpuMsPerItem: r.worker.headline.cpuMsPerOutcome });
  costLine(`worker (${r.worker.baseline.workers}), made alike`, { cpuMsPerItem: r.worker.baseline.cpuMsPerOutcome });
  costLine(`worker (${r.worker.comparison.workers})`, { cpuMsPerItem: r.worker.comparison.cpuMsPerOutcome });
  const other = phases.flatMap(([, ab]) => [...ab.bare.otherPercent, ...ab.subject.otherPercent]);
  out(`other work on the machine during the rounds: up to ${Math.max(0, ...other)}% of a core (more than 25% marks a phase noisy)`);
  const forked = phases.filter(([, ab]) => ab.subject.redisForks.some((n) => n > 0));
  out(
    forked.length === 0
      ? 'Redis rewrote its append-only file in no round'
      : `Redis rewrote its append-only file (a fork, its CPU in Redis's) in rounds of ${forked
          .map(([name, ab]) => `${name}: ${ab.subject.redisForks.join(', ')}`)
          .join('; ')}`,
  );
}
