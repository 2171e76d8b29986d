import { readdirSync } from 'node:fs';
import os from 'node:os';

/**
 * Lowers this process's CPU priority to `nice` (never raises it): on a host it shares with an
 * API, the API's answers come first and this process fills the cores' idle time
 * (docs/adr/0016-hot-path.md). On Linux niceness is per thread: every thread of the process
 * (V8's garbage collection and compiler threads too) is lowered, and threads made later (libuv's
 * pool) inherit the main thread's. Returns the failure, if any, for the caller to log.
 */
export function yieldTheCpu(nice: number): Error | null {
  let threads: number[] = [0];
  try {
    threads = readdirSync('/proc/self/task').map(Number);
  } catch {
    // Not Linux: the priority is the process's.
  }
  try {
    for (const thread of threads) if (os.getPriority(thread) < nice) os.setPriority(thread, nice);
    return null;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
