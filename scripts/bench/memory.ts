import { readProc } from './cpu';

/** Resident memory of benchmark processes, read from Linux /proc. */

/** VmRSS of a /proc/<pid>/status text, in KiB (0 when absent: the process has gone). */
export function parseVmRssKiB(status: string): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return match ? Number(match[1]) : 0;
}

/** The direct children of `pid` (e.g. the API processes a cluster primary forked). */
export function childPids(pid: number): number[] {
  return readProc(`/proc/${pid}/task/${pid}/children`).trim().split(/\s+/).filter(Boolean).map(Number);
}

export interface Rss {
  /** Sum over the processes, MiB. */
  totalMiB: number;
  /** Each process, MiB, in the order given. */
  perProcessMiB: number[];
}

/** Resident memory of `pids` now. */
export function rss(pids: number[]): Rss {
  const perProcessMiB = pids.map((pid) => Math.round(parseVmRssKiB(readProc(`/proc/${pid}/status`)) / 102.4) / 10);
  return { totalMiB: Math.round(perProcessMiB.reduce((sum, mib) => sum + mib, 0) * 10) / 10, perProcessMiB };
}
