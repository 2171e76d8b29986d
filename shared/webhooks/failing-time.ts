/**
 * How much of the time since an endpoint's previous failure counts towards disabling it
 * (docs/adr/0021-webhooks.md): at most the wait the retry schedule put before attempt number
 * `attempt` (1 for a delivery's first, which waits no longer than the first retry). A worker
 * paused by an outage resumes with a long gap since the last failure; only the scheduled wait
 * of it is counted, so an outage of ours never disables a customer's endpoint.
 */
export function failingTimeCap(schedule: readonly number[], attempt: number): number {
  const index = Math.min(Math.max(attempt - 2, 0), schedule.length - 1);
  return schedule[index]!;
}

/** The wait before the retry after attempt number `attempt`; null when the schedule is spent. */
export function retryWait(schedule: readonly number[], attempt: number): number | null {
  return attempt <= schedule.length ? schedule[attempt - 1]! : null;
}
