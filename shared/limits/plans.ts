import type { Plan } from '../keys/account.repository';

/** Limits per plan: requests per second per key, and requests per UTC month per key. */
export const PLAN_LIMITS: Record<Plan, { perSecond: number; perMonth: number | null }> = {
  starter: { perSecond: 10, perMonth: 100_000 },
  pro: { perSecond: 100, perMonth: 1_000_000 },
  enterprise: { perSecond: 1000, perMonth: null },
};

/** A key's own override (`keys create --rps`) wins over its plan's per-second limit. */
export function limitsFor(plan: Plan, rateLimitRps: number | null): { perSecond: number; perMonth: number | null } {
  const limits = PLAN_LIMITS[plan];
  return { perSecond: rateLimitRps ?? limits.perSecond, perMonth: limits.perMonth };
}
