import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { cpuPercent, cpuSnapshot, settleMachine, type Roles } from './cpu';
import { cannon, openLoop, postEach } from './load-client';
import { poolCpu, poolRuns, summarize, type LoadRun, type RunSummary } from './load-stats';
import { log, mustBeRunning, startProc, stopProc, waitUntil, type Proc } from './processes';
import type { FloodResult } from './signin-flood';

/**
 * bench:signin's second part: the API's latency at a steady open-loop rate of POST /v1/context,
 * alone ("quiet") and while a flood of wrong sign-ins hits the dashboard on the same machine
 * ("flood"). The two alternate in ABBA order (quiet, flood, flood, quiet…) so that a noisy
 * moment or a drift of the machine does not land on one side only; each side's rounds are pooled.
 */

export interface LoadPhaseOptions {
  /** POST /v1/context per second. */
  rate: number;
  /** Length of each measured run. */
  seconds: number;
  /** Quiet/flood pairs. */
  rounds: number;
  /** Concurrent connections of the flood. */
  connections: number;
  /** Distinct userIds the context calls rotate over (each profile is created before measuring). */
  users: number;
  /** Longest wait (s) for a quiet machine before each run. */
  settle: number;
}

export interface Rig {
  dir: string;
  redisPort: string;
  apiPort: number;
  dashboardPort: number;
  headers: Record<string, string>;
  /** Pids by role for the CPU figures. */
  roles: Record<string, number[]>;
  procs: Proc[];
}

export interface RoundResult {
  side: 'quiet' | 'flood';
  api: RunSummary;
  /** Percent of one core per role while the API was measured. */
  cpu: Roles;
  flood?: FloodResult;
}

export interface SideResult {
  api: RunSummary;
  cpu: Roles;
}

export interface LoadPhaseResult {
  rounds: RoundResult[];
  quiet: SideResult;
  flood: SideResult & { answers: Record<string, number>; verificationsPerSecond: number };
  /** Pooled flood p99 over pooled quiet p99. */
  p99Ratio: number;
  p50Ratio: number;
}

const LOAD_GENERATOR = 'bench (open-loop client)';
const FLOOD_CLIENT = 'flood client';

function contextBody(users: number): () => string {
  let n = 0;
  return () => JSON.stringify({ userId: `u${n++ % users}`, task: 't', complexity: 'low' });
}

/** Creates every user's profile, then runs the rate once unmeasured, so the measured runs find the API warm. */
async function warmApi(rig: Rig, o: LoadPhaseOptions): Promise<void> {
  log(`warming ${o.users} profiles and the API…`);
  const warm = await cannon(rig.apiPort, postEach('/v1/context', rig.headers, contextBody(o.users)), {
    amount: o.users,
    connections: Math.min(10, o.users),
  });
  if (warm.ok !== o.users) throw new Error(`warm-up: ${warm.ok}/${o.users} contexts succeeded (${JSON.stringify(warm.statusCodes)})`);
  // Long enough for the API's code to be optimised: a first measured run would otherwise be its slowest.
  await apiRun(rig, o, o.seconds);
}

function apiRun(rig: Rig, o: LoadPhaseOptions, seconds = o.seconds): Promise<LoadRun> {
  return openLoop({ port: rig.apiPort, path: '/v1/context', headers: rig.headers, body: contextBody(o.users), rate: o.rate, seconds });
}

/** Starts the flood process and waits until its sessions are open and it is sending. */
async function startFlood(rig: Rig, o: LoadPhaseOptions, firstClient: number, resultFile: string): Promise<Proc> {
  const script = path.join(__dirname, 'signin-flood.js');
  // The bound is only a backstop: the flood is stopped when the measured run ends.
  const args = [script, String(rig.dashboardPort), String(o.connections), String(o.seconds + 30), String(firstClient), resultFile];
  const proc = startProc('flood', args, process.env);
  await waitUntil('the flood to start', 20_000, 20, async () => {
    if (proc.child.exitCode !== null) throw new Error(`flood exited: ${proc.output()}`);
    return proc.output().includes('flooding') ? true : undefined;
  });
  return proc;
}

async function stopFlood(proc: Proc, resultFile: string): Promise<FloodResult> {
  await stopProc(proc);
  if (proc.child.exitCode !== 0) throw new Error(`flood failed: ${proc.output()}`);
  return JSON.parse(readFileSync(resultFile, 'utf8')) as FloodResult;
}

interface Measured {
  side: 'quiet' | 'flood';
  run: LoadRun;
  cpu: Roles;
  seconds: number;
  flood: FloodResult | undefined;
}

/** One measured run of the API; on the flood side, a flood of sign-ins runs for exactly as long. */
async function round(rig: Rig, o: LoadPhaseOptions, side: 'quiet' | 'flood', firstClient: number, index: number): Promise<Measured> {
  await settleMachine(o.settle);
  const resultFile = path.join(rig.dir, `flood-${index}.json`);
  const floodProc = side === 'flood' ? await startFlood(rig, o, firstClient, resultFile) : undefined;
  const roles = floodProc ? { ...rig.roles, [FLOOD_CLIENT]: [floodProc.child.pid!] } : rig.roles;
  const before = cpuSnapshot(roles, rig.dir, rig.redisPort);
  const start = performance.now();
  const run = await apiRun(rig, o);
  const seconds = (performance.now() - start) / 1000;
  const cpu = cpuPercent(before, cpuSnapshot(roles, rig.dir, rig.redisPort), seconds, LOAD_GENERATOR);
  const flood = floodProc ? await stopFlood(floodProc, resultFile) : undefined;
  mustBeRunning(...rig.procs);
  return { side, run, cpu, seconds, flood };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function sumAnswers(floods: FloodResult[]): Record<string, number> {
  const answers: Record<string, number> = {};
  for (const f of floods) for (const [label, n] of Object.entries(f.answers)) answers[label] = (answers[label] ?? 0) + n;
  return answers;
}

/** Pools each side's rounds (latencies, CPU, the flood's answers) and sets the two sides against each other. */
function summarizeRounds(measured: Measured[]): LoadPhaseResult {
  const pooled = (side: 'quiet' | 'flood') => {
    const rounds = measured.filter((m) => m.side === side);
    return { api: summarize(poolRuns(rounds.map((m) => m.run))), cpu: poolCpu(rounds).cpu };
  };
  const quiet = pooled('quiet');
  const floods = measured.flatMap((m) => (m.flood ? [m.flood] : []));
  const floodSeconds = floods.reduce((sum, f) => sum + f.seconds, 0);
  const verifications = floods.reduce((sum, f) => sum + (f.answers['401'] ?? 0), 0);
  const flood = {
    ...pooled('flood'),
    answers: sumAnswers(floods),
    verificationsPerSecond: round2(verifications / Math.max(0.001, floodSeconds)),
  };
  return {
    rounds: measured.map((m) => ({ side: m.side, api: summarize(m.run), cpu: m.cpu, ...(m.flood ? { flood: m.flood } : {}) })),
    quiet,
    flood,
    p99Ratio: round2(flood.api.p99 / quiet.api.p99),
    p50Ratio: round2(flood.api.p50 / quiet.api.p50),
  };
}

export async function loadPhase(rig: Rig, o: LoadPhaseOptions, firstClient: number): Promise<LoadPhaseResult> {
  await warmApi(rig, o);
  const measured: Measured[] = [];
  let nextClient = firstClient;
  for (let r = 0; r < o.rounds; r++) {
    // quiet, flood, flood, quiet, …: a drift of the machine over the run lands on both sides alike.
    const sides = r % 2 === 0 ? (['quiet', 'flood'] as const) : (['flood', 'quiet'] as const);
    for (const side of sides) {
      const under = side === 'flood' ? ' under a sign-in flood' : '';
      log(`round ${r + 1}/${o.rounds}, ${side}: ${o.rate} context calls/s for ${o.seconds} s${under}…`);
      const result = await round(rig, o, side, nextClient, measured.length);
      nextClient = result.flood?.nextClient ?? nextClient;
      measured.push(result);
    }
  }
  return summarizeRounds(measured);
}
