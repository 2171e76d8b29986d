import { z } from 'zod';

/** The plans an account can be on. */
export const PLANS = ['starter', 'pro', 'enterprise'] as const;
export const planSchema = z.enum(PLANS);
export type Plan = z.infer<typeof planSchema>;

/**
 * What each plan allows: requests per second per live key, requests per UTC month per account
 * (all its live keys together; null: none), and live keys per account. An enterprise account's
 * live-key cap is the operator's (`cos accounts set-plan … --live-keys`), this one by default.
 */
export const PLAN_LIMITS: Record<Plan, { perSecond: number; perMonth: number | null; liveKeys: number }> = {
  starter: { perSecond: 10, perMonth: 100_000, liveKeys: 5 },
  pro: { perSecond: 100, perMonth: 1_000_000, liveKeys: 25 },
  enterprise: { perSecond: 1000, perMonth: null, liveKeys: 100 },
};

/**
 * A live key's limits: its own per-second override (`rateLimitRps`, at most the plan's unless the
 * operator set it, see maxKeyRps) or the plan's, and the plan's monthly quota for the account.
 */
export function limitsFor(plan: Plan, rateLimitRps: number | null): { perSecond: number; perMonth: number | null } {
  const limits = PLAN_LIMITS[plan];
  return { perSecond: rateLimitRps ?? limits.perSecond, perMonth: limits.perMonth };
}

/** Who sets a key's per-second limit: a customer in the dashboard, or the operator's CLI. */
export type LimitSetter = 'customer' | 'operator';

/**
 * The highest per-second override `setter` may give a live key of `plan` (null: no bound). Only
 * the operator raises a key above its plan (what an enterprise contract buys); `cos accounts
 * set-plan` clamps overrides to the new plan's limit on a change.
 */
export function maxKeyRps(plan: Plan, setter: LimitSetter): number | null {
  return setter === 'operator' ? null : PLAN_LIMITS[plan].perSecond;
}

/** How many live keys an account may hold at once: its plan's, or an enterprise account's own cap. */
export function liveKeyCap(plan: Plan, liveKeyLimit: number | null): number {
  return plan === 'enterprise' && liveKeyLimit !== null ? liveKeyLimit : PLAN_LIMITS[plan].liveKeys;
}
