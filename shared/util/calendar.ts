/** UTC calendar arithmetic for quotas, metering and the monthly reset. */

const DAY_MS = 86_400_000;

/** What the calendar says about one UTC day (every UTC day is DAY_MS long: no leap seconds in ms time). */
interface Day {
  start: number;
  day: string;
  month: string;
  startOfMonth: number;
  startOfNextMonth: number;
}

/**
 * The day last asked about: a live key's limit check asks for its day and month on every
 * request, and nearly every request falls on the same day as the one before it.
 */
let recent: Day | undefined;

function dayOf(ms: number): Day {
  if (recent !== undefined && ms >= recent.start && ms < recent.start + DAY_MS) return recent;
  const date = new Date(ms);
  const iso = date.toISOString(); // throws for an invalid time, as Date does
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  recent = {
    start: Date.UTC(year, month, date.getUTCDate()),
    day: iso.slice(0, 10),
    month: iso.slice(0, 7),
    startOfMonth: Date.UTC(year, month, 1),
    startOfNextMonth: Date.UTC(year, month + 1, 1),
  };
  return recent;
}

export function utcDay(ms: number): string {
  return dayOf(ms).day;
}

export function utcMonth(ms: number): string {
  return dayOf(ms).month;
}

/** 00:00 UTC on the 1st of the month after the one containing `ms`. */
export function startOfNextMonth(ms: number): number {
  return dayOf(ms).startOfNextMonth;
}

export function startOfMonth(ms: number): number {
  return dayOf(ms).startOfMonth;
}

export function secondsInMonth(ms: number): number {
  const day = dayOf(ms);
  return (day.startOfNextMonth - day.startOfMonth) / 1000;
}
