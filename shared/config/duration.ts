import { z } from 'zod';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses durations: a number and one unit of ms, s, m, h or d ("200ms", "5s", "24h", "7d"). */
export function parseDuration(text: string): number | null {
  const match = /^(\d+(?:\.\d+)?)(ms|[smhd])$/.exec(text.trim());
  if (!match) return null;
  const ms = Math.round(Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]);
  return Number.isFinite(ms) && ms > 0 ? ms : null;
}

/** zod schema turning a duration string into milliseconds. */
export const durationMs = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration like 30s, 5m, 24h or 7d` });
    return z.NEVER;
  }
  return ms;
});
