import type { Db } from '../db/database';
import { liveKeyCap, PLAN_LIMITS, PLANS, type Plan } from '../limits/plans';
import { lockAccount, setPlan, type Account } from './account.repository';
import { clampKeyRps, countLiveKeys } from '../credentials/key.repository';

export interface PlanChange {
  /** Keys whose per-second override was above the new plan's limit and now equals it. */
  clampedKeys: number;
  liveKeys: number;
  liveKeyCap: number;
}

/**
 * Moves an account to `plan` in one transaction: on a downgrade, per-key overrides above the new
 * plan's per-second limit come down to it (overrides above a plan are the operator's to give,
 * and a downgrade takes them back), and the live-key cap becomes the plan's (or `liveKeyLimit`, enterprise
 * only). Existing live keys beyond the cap keep working; new ones wait until fewer remain. API
 * instances see the change within their credential refresh (the accounts row's updated_at).
 */
export async function changePlan(db: Db, account: Account, plan: Plan, liveKeyLimit: number | null): Promise<PlanChange> {
  return db.transaction().execute(async (tx) => {
    await lockAccount(tx, account.id);
    await setPlan(tx, account.id, plan, liveKeyLimit);
    const downgrade = PLANS.indexOf(plan) < PLANS.indexOf(account.plan);
    const clampedKeys = downgrade ? await clampKeyRps(tx, account.id, PLAN_LIMITS[plan].perSecond) : 0;
    return { clampedKeys, liveKeys: await countLiveKeys(tx, account.id, new Date()), liveKeyCap: liveKeyCap(plan, liveKeyLimit) };
  });
}
