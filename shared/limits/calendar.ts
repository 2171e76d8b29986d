/** UTC calendar arithmetic for quotas, metering and the monthly reset. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function utcMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

/** 00:00 UTC on the 1st of the month after the one containing `ms`. */
export function startOfNextMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export function startOfMonth(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export function secondsInMonth(ms: number): number {
  return (startOfNextMonth(ms) - startOfMonth(ms)) / 1000;
}
