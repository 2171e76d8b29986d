import { percentile } from '../bench/stats';
import type { OutcomeLedger } from './ledger';
import type { MinuteStats } from './traffic';

/** One minute of the soak as reported: traffic, latency, and the memory of each process at its end. */
export interface MinuteRow {
  minute: number;
  requests: number;
  statuses: Record<string, number>;
  noAnswer: number;
  p50Ms: number | null;
  p99Ms: number | null;
  /** Percent of the whole machine busy (all processes, ours and others'). */
  machineBusyPercent: number | null;
  memoryMb: Record<string, number | null>;
}

export interface SoakResult {
  command: string;
  date: string;
  source: { commit: string; uncommittedFiles: number };
  machine: { cpu: string; cores: number; memoryGiB: number; node: string; os: string };
  settings: Record<string, number | boolean>;
  events: Array<{ atS: number; what: string }>;
  minutes: MinuteRow[];
  outcomes: Omit<OutcomeLedger, 'lost'> & {
    lost: number;
    /** Lost outcomes whose job is in the failed set (parked: their decision was lost). */
    lostParked: number;
    refused: Record<string, number>;
  };
  failedJobs: { count: number; reasons: string[] };
  queueDrained: boolean;
  fiveHundredsOtherThan503: number;
  pass: boolean;
}

const round = (n: number) => Math.round(n * 10) / 10;

export function minuteRow(
  index: number,
  stats: MinuteStats,
  machineBusyPercent: number | null,
  memoryMb: Record<string, number | null>,
): MinuteRow {
  const sorted = Float64Array.from(stats.latencies).sort();
  const requests = Object.values(stats.statuses).reduce((sum, n) => sum + n, 0) + stats.errors;
  return {
    minute: index + 1,
    requests,
    statuses: stats.statuses,
    noAnswer: stats.errors,
    p50Ms: sorted.length ? round(percentile(sorted, 50)) : null,
    p99Ms: sorted.length ? round(percentile(sorted, 99)) : null,
    machineBusyPercent,
    memoryMb,
  };
}

const count = (statuses: Record<string, number>, test: (status: number) => boolean) =>
  Object.entries(statuses).reduce((sum, [status, n]) => sum + (test(Number(status)) ? n : 0), 0);

export const otherServerErrors = (rows: MinuteRow[]) =>
  rows.reduce((sum, row) => sum + count(row.statuses, (s) => s >= 500 && s !== 503), 0);

export function printReport(r: SoakResult): void {
  const out = (line = '') => process.stdout.write(`${line}\n`);
  out(`\n${r.command}`);
  out(`source ${r.source.commit} + ${r.source.uncommittedFiles} uncommitted files; ${r.date}`);
  out(`machine: ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memoryGiB} GiB, node ${r.machine.node}`);
  out(
    `settings: ${Object.entries(r.settings)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  out('\nevents:');
  for (const e of r.events)
    out(`  ${String(Math.floor(e.atS / 60)).padStart(2)}:${String(Math.round(e.atS % 60)).padStart(2, '0')}  ${e.what}`);
  const roles = Object.keys(r.minutes[0]?.memoryMb ?? {});
  out(`\nmin  requests   2xx    202    503   other 5xx  4xx  no answer  p50 ms  p99 ms  busy %  memory MB (${roles.join(', ')})`);
  for (const m of r.minutes) {
    const cells = [
      String(m.minute).padEnd(5),
      String(m.requests).padEnd(11),
      String(count(m.statuses, (s) => s >= 200 && s < 300 && s !== 202)).padEnd(7),
      String(m.statuses['202'] ?? 0).padEnd(7),
      String(m.statuses['503'] ?? 0).padEnd(6),
      String(count(m.statuses, (s) => s >= 500 && s !== 503)).padEnd(11),
      String(count(m.statuses, (s) => s >= 400 && s < 500)).padEnd(5),
      String(m.noAnswer).padEnd(11),
      String(m.p50Ms ?? '-').padEnd(8),
      String(m.p99Ms ?? '-').padEnd(8),
      String(m.machineBusyPercent ?? '-').padEnd(8),
      roles.map((role) => m.memoryMb[role] ?? '-').join(' / '),
    ];
    out(cells.join(''));
  }
  const o = r.outcomes;
  out(
    `\noutcomes: accepted (202) ${o.accepted}, applied ${o.applied}, lost ${o.lost} (${o.lostParked} parked: decision lost), ` +
      `applied twice ${o.appliedTwice}, applied without a 202 seen ${o.appliedWithoutAck}, refused ${JSON.stringify(o.refused)}`,
  );
  out(`failed set: ${r.failedJobs.count}${r.failedJobs.reasons.length ? ` (${r.failedJobs.reasons.join('; ')})` : ''}`);
  out(`queue drained: ${r.queueDrained}; 5xx other than 503: ${r.fiveHundredsOtherThan503}`);
  out(`verdict: ${r.pass ? 'PASS' : 'FAIL'}`);
}
