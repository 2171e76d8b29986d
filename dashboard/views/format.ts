/** Dates as people read them on the pages: UTC, to the minute. */
export function formatTime(iso: string | null): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

export const DAY_MS = 86_400_000;

/** Whole days between `iso` and `now`. */
export const ageInDays = (iso: string, now: number): number => Math.max(0, Math.floor((now - Date.parse(iso)) / DAY_MS));

/** A moment to the second, UTC, 24-hour: where the order of events matters (the audit log). */
export function formatSecond(iso: string | null): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}
