import { z } from 'zod';

/** The outcome signals a client reports (POST /v1/outcome). */
export const outcomeSignalsSchema = z.object({
  started: z.boolean(),
  completed: z.boolean().optional(),
  timeToStart: z.number().finite().min(0, 'must be a number of seconds ≥ 0').optional(),
  flowState: z.boolean().optional(),
  satisfaction: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1').optional(),
});
export type OutcomeSignals = z.infer<typeof outcomeSignalsSchema>;

/** Weights of each signal in the reward; documented in docs/API.md. */
export const REWARD_WEIGHTS = {
  started: 0.3,
  completed: 0.3,
  satisfaction: 0.2,
  flowState: 0.1,
  quickStart: 0.1,
} as const;

/** Seconds at which a quick-start signal has decayed to 1/e. */
export const QUICK_START_SCALE_SECONDS = 600;

/**
 * Reward r ∈ [0,1]: the weighted mean of the signals present. `started` is always present;
 * the quick-start signal exp(-timeToStart/600) is present when `timeToStart` is.
 */
export function computeReward(signals: OutcomeSignals): number {
  const parts: Array<[number, number]> = [[REWARD_WEIGHTS.started, signals.started ? 1 : 0]];
  if (signals.completed !== undefined) parts.push([REWARD_WEIGHTS.completed, signals.completed ? 1 : 0]);
  if (signals.satisfaction !== undefined) parts.push([REWARD_WEIGHTS.satisfaction, signals.satisfaction]);
  if (signals.flowState !== undefined) parts.push([REWARD_WEIGHTS.flowState, signals.flowState ? 1 : 0]);
  if (signals.timeToStart !== undefined) {
    parts.push([REWARD_WEIGHTS.quickStart, Math.exp(-signals.timeToStart / QUICK_START_SCALE_SECONDS)]);
  }
  const weight = parts.reduce((sum, [w]) => sum + w, 0);
  const value = parts.reduce((sum, [w, v]) => sum + w * v, 0) / weight;
  return Math.min(1, Math.max(0, value));
}
