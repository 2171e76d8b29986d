import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { log, sleep } from './processes';

/**
 * CPU use per process of a benchmark run, read from Linux /proc: the processes it started
 * (by role), its throwaway Postgres (postmaster and backends) and Redis, the benchmark itself,
 * and the rest of the machine.
 */
/** Percent of one core per role (or ms of CPU per item, per role). */
export type Roles = Record<string, number>;
export interface CpuSnapshot {
  /** `forked`: a child of Postgres or Redis, whose time moves to its parent's when it exits. */
  pids: Map<number, { role: string; ticks: number; forked: boolean }>;
  self: number;
  busy: number;
  irq: number;
  steal: number;
}

/** A /proc file's text, or '' when the process has gone. */
export function readProc(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
/** The machine's CPU time so far (1/100 s): busy in all, of it interrupts, and stolen by the hypervisor. */
export function systemTicks(): { busy: number; irq: number; steal: number } {
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = readProc('/proc/stat')
    .split('\n')[0]!
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { busy: user + nice + system + irq + softirq, irq: irq + softirq, steal };
}
/** Percent of the machine (all cores) busy between two systemTicks() taken `ms` apart, whoever was busy. */
export const busyPercent = (before: { busy: number }, after: { busy: number }, ms: number) =>
  // ms / 10 ticks elapse per core; the result is a share of all cores, in percent.
  Math.round(((after.busy - before.busy) / (ms / 10) / os.cpus().length) * 100);
/** Percent of the machine (all cores) busy over `ms`, whoever is busy. */
export async function machineBusy(ms: number): Promise<number> {
  const a = systemTicks();
  await sleep(ms);
  return busyPercent(a, systemTicks(), ms);
}
/**
 * Other work on the machine skews every figure: waits up to `maxSeconds` for a second in which
 * the machine is at most 10% busy; returns the % still busy.
 */
export async function settleMachine(maxSeconds: number): Promise<number> {
  let busy = await machineBusy(1000);
  if (busy > 10 && maxSeconds > 0) log(`the machine is ${busy}% busy with other work; waiting up to ${maxSeconds} s for it to settle…`);
  for (let i = 1; i < maxSeconds && busy > 10; i++) busy = await machineBusy(1000);
  if (busy > 10) log(`${busy}% busy; measuring anyway (see "other" in the CPU figures)`);
  return busy;
}
/**
 * CPU ticks (1/100 s) of every process we started, by role. Postgres counts its backends and
 * Redis its forks (an append-only file's rewrite), the live ones and, through their parent's
 * reaped children's time, those that exited: both fork work of their own.
 */
export function cpuSnapshot(roles: Record<string, number[]>, dataDir: string, redisPort: string): CpuSnapshot {
  const stats = new Map<number, { ppid: number; ticks: number; reaped: number; cmd: string }>();
  for (const name of safeReaddir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const text = readProc(`/proc/${name}/stat`);
    if (!text) continue;
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    stats.set(Number(name), {
      ppid: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]),
      reaped: Number(fields[13]) + Number(fields[14]),
      cmd: readProc(`/proc/${name}/cmdline`).replace(/\0/g, ' '),
    });
  }
  const postmaster = [...stats].find(([, s]) => /postgres/.test(s.cmd) && s.cmd.includes(path.join(dataDir, 'pg')))?.[0];
  const redis = [...stats].find(([, s]) => /redis-server/.test(s.cmd) && s.cmd.includes(`:${redisPort}`))?.[0];
  const pids: CpuSnapshot['pids'] = new Map();
  for (const [pid, s] of stats) {
    const role =
      pid === postmaster || s.ppid === postmaster
        ? 'postgres'
        : pid === redis || s.ppid === redis
          ? 'redis'
          : Object.entries(roles).find(([, list]) => list.includes(pid))?.[0];
    const parent = pid === postmaster || pid === redis;
    const forked = !parent && (s.ppid === postmaster || s.ppid === redis);
    if (role) pids.set(pid, { role, ticks: parent ? s.ticks + s.reaped : s.ticks, forked });
  }
  const self = process.cpuUsage();
  return { pids, self: (self.user + self.system) / 10_000, ...systemTicks() };
}
function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
/**
 * CPU milliseconds our processes (and the kernel's network work) spent per request or outcome,
 * and the rate all cores would give at that cost: an estimate that other work on the machine
 * does not skew the way it skews the measured rates.
 */
export function costPer(phase: { cpu: Roles; seconds: number }, items: number) {
  const ms: Roles = {};
  for (const [role, pct] of Object.entries(phase.cpu)) {
    if (role !== 'other' && role !== 'steal' && pct > 0)
      ms[role] = Math.round(((pct * 10 * phase.seconds) / Math.max(1, items)) * 1000) / 1000;
  }
  const total = Object.values(ms).reduce((sum, v) => sum + v, 0);
  return {
    cpuMsPerItem: ms,
    totalCpuMs: Math.round(total * 1000) / 1000,
    estimatedPerSecOnAllCores: Math.round((os.cpus().length * 1000) / total),
  };
}

/**
 * Percent of one core (100 = one full core) used by each role between two snapshots (this
 * process under `selfRole`). `other`
 * is everything else that kept the machine busy (other users' processes, kernel threads, the
 * last moments of processes that exited in between); `steal` is time the hypervisor took.
 */
export function cpuPercent(before: CpuSnapshot, after: CpuSnapshot, seconds: number, selfRole: string): Roles {
  const ticks: Roles = { postgres: 0, redis: 0 };
  for (const [pid, { role, ticks: t }] of after.pids) ticks[role] = (ticks[role] ?? 0) + t - (before.pids.get(pid)?.ticks ?? 0);
  // A fork that exited in between: its whole time is in its parent's now, its earlier part counted before.
  for (const [pid, { role, ticks: t, forked }] of before.pids) if (forked && !after.pids.has(pid)) ticks[role] = (ticks[role] ?? 0) - t;
  ticks[selfRole] = after.self - before.self;
  const ours = Object.values(ticks).reduce((sum, t) => sum + t, 0);
  ticks['kernel irq/softirq (loopback TCP)'] = after.irq - before.irq;
  ticks.other = after.busy - before.busy - ours - ticks['kernel irq/softirq (loopback TCP)']!;
  ticks.steal = after.steal - before.steal;
  return Object.fromEntries(Object.entries(ticks).map(([role, t]) => [role, Math.round(t / seconds)]));
}

/**
 * Percent of one core each of `pids` used between two snapshots, in the order given: the
 * processes of one role one by one (which of two workers is the busy one), where cpuPercent
 * sums them. A pid missing from `before` started in between and counts from its start.
 */
export function pidCpuPercent(before: CpuSnapshot, after: CpuSnapshot, seconds: number, pids: readonly number[]): number[] {
  return pids.map((pid) => {
    const ticks = (after.pids.get(pid)?.ticks ?? 0) - (before.pids.get(pid)?.ticks ?? 0);
    return Math.round(ticks / seconds);
  });
}
