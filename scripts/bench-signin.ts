import path from 'node:path';
import { nodeArgs } from '../shared/process/node-flags';
import { machineBusy } from './bench/cpu';
import { stopLoad } from './bench/load-client';
import { log, startBenchBackend, startServer, withCleanup } from './bench/processes';
import { machineDescription, runSource } from './bench/provenance';
import { startDashboard } from './bench/signin-client';
import { loadPhase, type LoadPhaseOptions } from './bench/signin-load';
import { judge, printReport, type SignInBenchResult } from './bench/signin-report';
import { seedKnownUsers, timingPhase, type TimingOptions } from './bench/signin-timing';

/**
 * `npm run bench:signin`: the dashboard's sign-in (POST /signin) measured two ways, on a
 * throwaway Postgres + Redis with the built api and dashboard as processes:
 *
 * 1. whether its answer time tells a known email from an unknown one (interleaved pairs of
 *    wrong sign-ins, each from a client address of its own so the throttle stays out of it);
 * 2. what a flood of wrong sign-ins from many addresses does to the API's latency on the same
 *    machine (open-loop POST /v1/context, quiet and flooded runs alternating).
 *
 * Prints the figures and the targets, then one JSON line with everything. Everything it starts
 * is stopped again, also on error or Ctrl-C; all traffic goes to 127.0.0.1 (the client
 * addresses are only X-Forwarded-For values, which the dashboard trusts from loopback).
 *
 *   node dist/scripts/bench-signin.js [--pairs N] [--rate N] [--seconds N] [--rounds N] [--connections N] [--users N] [--settle N]
 */

function flag(name: string, fallback: number, min: number, max: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} needs a whole number from ${min} to ${max}`);
  return value;
}

// The upper bounds keep a run within minutes and the load within what two cores can take.
const timingOpts: Omit<TimingOptions, 'firstClient'> = {
  pairs: flag('pairs', 100, 1, 1000),
  warmupPairs: 10,
  gapMs: 25,
};
const loadOpts: LoadPhaseOptions = {
  rate: flag('rate', 200, 1, 2000),
  seconds: flag('seconds', 10, 1, 60),
  rounds: flag('rounds', 2, 1, 5),
  connections: flag('connections', 50, 1, 200),
  users: flag('users', 1000, 1, 10_000),
  settle: flag('settle', 5, 0, 30),
};

async function run(dir: string, onCleanup: (step: () => Promise<void>) => void): Promise<SignInBenchResult> {
  const source = runSource();
  const machine = machineDescription();
  log(`machine: ${machine.cpu}, ${machine.cores} cores, node ${machine.node}`);
  const busyAtStart = await machineBusy(1000);

  const { services, db, key, env } = await startBenchBackend(dir, onCleanup, {
    account: 'bench',
    keyName: 'bench key',
    prefix: 'bench',
    dbPoolSize: 2,
  });
  const emails = await seedKnownUsers(db, timingOpts.pairs + timingOpts.warmupPairs);
  log('starting the api and the dashboard…');
  const api = await startServer('api', nodeArgs('api', path.join(__dirname, '../api/main.js')), { ...env, API_PROCESSES: '1' }, '/readyz');
  const dashboard = await startDashboard(env);

  // The timing runs first, on a machine with nothing else to do.
  const timing = await timingPhase(dashboard.port, emails, { ...timingOpts, firstClient: 0 });
  const load = await loadPhase(
    {
      dir,
      redisPort: new URL(services.redisUrl).port,
      apiPort: api.port,
      dashboardPort: dashboard.port,
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
      roles: { api: [api.proc.child.pid!], dashboard: [dashboard.proc.child.pid!] },
      procs: [api.proc, dashboard.proc],
    },
    loadOpts,
    timing.nextClient,
  );
  const targets = judge(timing, load);
  return {
    date: new Date().toISOString(),
    command: `node dist/scripts/bench-signin.js ${process.argv.slice(2).join(' ')}`.trim(),
    source,
    machine: { ...machine, busyWithOtherWorkAtStartPercent: busyAtStart },
    settings: { ...timingOpts, ...loadOpts },
    timing,
    load,
    targets,
    allPass: targets.every((t) => t.pass),
  };
}

withCleanup('cos-bench-signin-', run, stopLoad).then(
  (result) => {
    printReport(result);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
