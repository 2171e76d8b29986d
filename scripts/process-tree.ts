import { readFileSync } from 'node:fs';

/** The processes `pid` started (from /proc; none when it is gone). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Freezes (SIGSTOP) or thaws (SIGCONT) a server and every process it started — Postgres's
 * backends call setsid(), so a signal to the postmaster's group would miss them. The parent is
 * stopped first (it forks no new child meanwhile) and continued last. A process already gone is
 * passed over.
 */
export function signalTree(pid: number, signal: 'SIGSTOP' | 'SIGCONT'): void {
  const children = childrenOf(pid);
  for (const target of signal === 'SIGSTOP' ? [pid, ...children] : [...children, pid]) {
    try {
      process.kill(target, signal);
    } catch {
      // gone already
    }
  }
}
