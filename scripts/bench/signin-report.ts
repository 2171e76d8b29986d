import type { Roles } from './cpu';
import type { RunSummary } from './load-stats';
import type { LoadPhaseResult } from './signin-load';
import type { TimingResult } from './signin-timing';

/** bench:signin's result (its last output line, as JSON) and its printed form. */

export interface Target {
  name: string;
  limit: string;
  measured: number;
  pass: boolean;
}

export interface SignInBenchResult {
  date: string;
  command: string;
  source: { commit: string; uncommittedFiles: number };
  machine: { cpu: string; cores: number; memoryGiB: number; node: string; os: string; busyWithOtherWorkAtStartPercent: number };
  settings: Record<string, number>;
  timing: TimingResult;
  load: LoadPhaseResult;
  targets: Target[];
  allPass: boolean;
}

/** A known email must not be told apart by time: median gap under 1 ms. */
export const MAX_TIMING_GAP_MS = 1;
/** A sign-in flood may raise the API's p99 by half at most. */
export const MAX_FLOOD_P99_RATIO = 1.5;

export function judge(timing: TimingResult, load: LoadPhaseResult): Target[] {
  return [
    {
      name: 'median gap known − unknown email (ms)',
      limit: `|gap| < ${MAX_TIMING_GAP_MS}`,
      measured: timing.gapMs.median,
      pass: timing.pairs > 0 && Math.abs(timing.gapMs.median) < MAX_TIMING_GAP_MS,
    },
    {
      name: 'API p99 under sign-in flood / quiet',
      limit: `≤ ${MAX_FLOOD_P99_RATIO}`,
      measured: load.p99Ratio,
      pass: load.p99Ratio <= MAX_FLOOD_P99_RATIO,
    },
  ];
}

const out = (text = '') => process.stdout.write(`${text}\n`);
const counts = (answers: Record<string, number>) =>
  Object.entries(answers)
    .map(([label, n]) => `${label}: ${n}`)
    .join(', ');
const cpuLine = (cpu: Roles) =>
  Object.entries(cpu)
    .filter(([, pct]) => pct !== 0)
    .map(([role, pct]) => `${role} ${pct}%`)
    .join(', ');
const apiLine = (s: RunSummary) =>
  `p50 ${s.p50} ms, p99 ${s.p99} ms, ${s.ok} ok, ${s.non2xx} non-2xx, ${s.errors} errors, ${s.timeouts} timeouts, client lag ≤ ${s.maxSendLagMs ?? 0} ms`;

function printTiming(t: TimingResult): void {
  out(`1. Sign-in time, wrong password of a known email vs an unknown email (${t.pairs} pairs, order alternating)`);
  out(`   known:    median ${t.knownMs.median} ms, p90 ${t.knownMs.p90} ms`);
  out(`   unknown:  median ${t.unknownMs.median} ms, p90 ${t.unknownMs.p90} ms`);
  out(`   gap known − unknown per pair: median ${t.gapMs.median} ms, p10 ${t.gapMs.p10} ms, p90 ${t.gapMs.p90} ms`);
  out(`   known answered later in ${t.knownSlowerPairs} of ${t.pairs} pairs (sign test p = ${t.signTestP}); answers: ${counts(t.answers)}`);
}

function printLoad(l: LoadPhaseResult): void {
  out('2. API POST /v1/context latency, quiet vs during a sign-in flood on the dashboard');
  for (const [i, r] of l.rounds.entries()) {
    out(`   run ${i + 1} ${r.side.padEnd(5)}  ${apiLine(r.api)}`);
    if (r.flood)
      out(
        `                flood: ${r.flood.attempts} attempts in ${r.flood.seconds} s (${counts(r.flood.answers)}), ${r.flood.verificationsPerSecond} verifications/s`,
      );
    out(`                CPU (% of a core): ${cpuLine(r.cpu)}`);
  }
  out(`   quiet (pooled):  ${apiLine(l.quiet.api)}`);
  out(`   flood (pooled):  ${apiLine(l.flood.api)}`);
  out(`   flood answers:   ${counts(l.flood.answers)}; ${l.flood.verificationsPerSecond} verifications/s`);
  out(`   CPU quiet:       ${cpuLine(l.quiet.cpu)}`);
  out(`   CPU flood:       ${cpuLine(l.flood.cpu)}`);
  out(`   ratio flood/quiet: p50 ${l.p50Ratio}, p99 ${l.p99Ratio}`);
}

export function printReport(r: SignInBenchResult): void {
  out(
    `bench:signin ${r.date}, commit ${r.source.commit}${r.source.uncommittedFiles ? ` (+${r.source.uncommittedFiles} uncommitted files)` : ''}`,
  );
  out(`${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGiB} GiB, node ${r.machine.node}, ${r.machine.os}`);
  out(`busy with other work at start: ${r.machine.busyWithOtherWorkAtStartPercent}%; settings: ${JSON.stringify(r.settings)}`);
  out();
  printTiming(r.timing);
  out();
  printLoad(r.load);
  out();
  for (const t of r.targets) out(`${t.pass ? 'PASS' : 'FAIL'}  ${t.name}: ${t.measured} (target ${t.limit})`);
}
