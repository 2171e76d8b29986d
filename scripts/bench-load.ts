import path from 'node:path';
import { apiProcessesPhase } from './bench/api-processes-phase';
import { contextPhases } from './bench/context-phase';
import { machineBusy } from './bench/cpu';
import { machineDescription, runSource } from './bench/provenance';
import { sendIdempotencyKeys, stopLoad } from './bench/load-client';
import { printReport, type LoadResult } from './bench/load-report';
import { LoadRig, type LoadOptions } from './bench/load-rig';
import { judge, STEADY_RATE } from './bench/load-targets';
import { outcomePhase } from './bench/outcome-phase';
import { idempotencyMemory } from './bench/idempotency-memory';
import { log, stopProc, withCleanup } from './bench/processes';
import { workerPhase } from './bench/worker-phase';

/**
 * `npm run bench:load`: in one run, on this machine, a throwaway Postgres + Redis, a bare
 * Express 5 JSON POST handler as the baseline in its own process, and the built api (one
 * process) and worker; each load phase alternates bare and the subject round by round. Prints
 * a table (or, with --json, one JSON object) with the targets. Everything it starts is stopped
 * again, also on error or Ctrl-C; all traffic stays on 127.0.0.1. docs/BENCHMARKS.md has the method.
 */

function flag(name: string, fallback: number, min = 1): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} needs a number ≥ ${min}`);
  return value;
}
const whole = (name: string, fallback: number, min = 1): number => {
  const value = flag(name, fallback, min);
  if (!Number.isInteger(value)) throw new Error(`--${name} needs a whole number`);
  return value;
};
const opts: LoadOptions & { apiProcesses: number; idempotencyKeys: boolean } = {
  duration: flag('duration', 10, 0.5),
  warmup: flag('warmup', 2, 0.5),
  rounds: whole('rounds', 2),
  connections: whole('connections', 50),
  users: whole('users', 1000),
  workers: whole('workers', 1),
  compareWorkers: whole('compare-workers', 2),
  steadyRate: whole('steady-rate', STEADY_RATE),
  apiProcesses: whole('api-processes', 2, 2),
  settle: whole('settle', 30, 0),
  json: process.argv.includes('--json'),
  idempotencyKeys: !process.argv.includes('--without-idempotency-keys'),
  cpuProfDir: process.argv.includes('--cpu-prof-dir')
    ? path.resolve(process.argv[process.argv.indexOf('--cpu-prof-dir') + 1] ?? '.')
    : undefined,
};

async function run(dir: string, onCleanup: (step: () => Promise<void>) => void): Promise<LoadResult> {
  const source = runSource();
  const machine = machineDescription();
  log(`machine: ${machine.cpu}, ${machine.cores} cores, node ${machine.node}`);
  const busyAtStart = await machineBusy(1000);

  sendIdempotencyKeys(opts.idempotencyKeys);
  const rig = await LoadRig.start(dir, onCleanup, opts);
  const context = await contextPhases(rig);
  const outcome = await outcomePhase(rig, context);
  // Every POST so far carried an Idempotency-Key (unless told not to); their records are all still inside the window.
  const idempotency = opts.idempotencyKeys ? await idempotencyMemory(rig.redis) : null;
  const worker = await workerPhase(rig, outcome.backlog);
  const apiProcesses = await apiProcessesPhase(rig, opts.apiProcesses);
  await rig.stopWorkers();
  await stopProc(rig.api.proc);

  const targets = judge(context, outcome, worker);
  return {
    date: new Date().toISOString(),
    command: `node dist/scripts/bench-load.js ${process.argv.slice(2).join(' ')}`.trim(),
    source,
    machine: { ...machine, busyWithOtherWorkAtStartPercent: busyAtStart },
    settings: {
      durationS: opts.duration,
      warmupS: opts.warmup,
      rounds: opts.rounds,
      connections: opts.connections,
      pipelining: 1,
      users: opts.users,
      workers: opts.workers,
      compareWorkers: opts.compareWorkers,
      steadyRate: opts.steadyRate,
      apiProcesses: opts.apiProcesses,
      idempotencyKeys: opts.idempotencyKeys,
    },
    context,
    outcome,
    idempotency,
    worker,
    apiProcesses,
    targets,
    allPass: targets.every((t) => t.pass),
  };
}

withCleanup('cos-bench-', run, stopLoad).then(
  (result) => {
    if (opts.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else printReport(result);
    process.exit(0);
  },
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
