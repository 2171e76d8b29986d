import { DIMENSION_NAMES, type Choice, type TaskComplexity } from '../../shared/domain/arms';
import {
  bestChoice,
  complexityAt,
  DRIFT_AFTER,
  preferencesAt,
  simulateOutcome,
  taskTypeAt,
  type SimUser,
  type Simulation,
} from './simulator';
import type { Policy } from './policies';
import { mean, sampleVariance } from './stats';

/** What the benchmark records of one interaction. */
export interface InteractionRecord {
  reward: number;
  /** The framing picked is the user's best framing in this context at this time. */
  bestFraming: boolean;
  /** The framing picked is the user's best after the drift (the same as bestFraming for non-drifters). */
  framingIsDriftBest: boolean;
  /** The value picked is the user's best in this context at this time, per dimension (DIMENSION_NAMES order). */
  bestValues: boolean[];
  /** The whole combination is the user's best in this context at this time. */
  bestCombination: boolean;
  confidence: number | null;
  /** The policy chose some dimension off its current best, to explore; null when the policy does not say. */
  explored: boolean | null;
}

/** The JSON metrics; null where a metric does not apply (or the run is too short for it). */
export interface PolicyMetrics {
  meanReward_1_10: number | null;
  meanReward_11_40: number | null;
  meanReward_41_80: number | null;
  bestFramingShareLast10: number | null;
  coldStartReward: number | null;
  driftRecovery: number | null;
  ece: number | null;
  /** Shares of interactions 31–40 (the users who do not drift) that picked the user's best style, complexity handling, encouragement, and all four. */
  bestStyleShareLast10: number | null;
  bestComplexityShareLast10: number | null;
  bestEncouragementShareLast10: number | null;
  bestAllShareLast10: number | null;
  /** Shares of interactions 1–10, 31–40 and 71–80 answered off the policy's current best (exploration); null when the policy does not say. */
  exploredShare_1_10: number | null;
  exploredShare_31_40: number | null;
  exploredShare_71_80: number | null;
}

export interface PolicyResult {
  metrics: PolicyMetrics;
  /** Mean reward over the whole run (for regret vs the oracle and for tuning). */
  meanRewardAll: number;
  /** Share of drifting users whose picks reached the recovery criterion within the run. */
  driftRecoveredShare: number;
  /** Share of all users' interactions 11–40 that picked the user's best framing (null when the run is shorter). */
  bestFramingShare11to40: number | null;
  /** Each user's mean reward over interactions 1–3 and 11–40 (empty when the run is too short), for paired comparisons. */
  perUser: { coldStart: number[]; reward11to40: number[] };
}

/**
 * Mean of the per-user differences a − b (the same users, contexts and outcome noise for both
 * policies) and the half-width of its 95% confidence interval.
 */
export function pairedDifference(a: readonly number[], b: readonly number[]): { mean: number; halfWidth: number } {
  const diffs = a.map((x, i) => x - b[i]!);
  return { mean: mean(diffs), halfWidth: 1.96 * Math.sqrt(sampleVariance(diffs) / Math.max(1, diffs.length)) };
}

/** One user's interaction in a round: its number (1-based) and the request's context. */
export interface ScheduledInteraction {
  user: SimUser;
  interaction: number;
  complexity: TaskComplexity;
  taskType: string | undefined;
  /** The complexity whose preferences apply (preferencesAt). */
  preferences: TaskComplexity;
}

/** How many rounds the simulation lasts: until the last user to join has had all their interactions. */
export const roundCount = (sim: Simulation): number => Math.max(0, ...sim.arrival) + sim.interactions;

/** The interactions of round `round` (0-based), in user order: users join in a staggered way (sim.arrival). */
export function roundInteractions(sim: Simulation, round: number): ScheduledInteraction[] {
  const scheduled: ScheduledInteraction[] = [];
  for (const user of sim.users) {
    const interaction = round - sim.arrival[user.index]! + 1;
    if (interaction < 1 || interaction > sim.interactions) continue;
    const complexity = complexityAt(sim, user, interaction);
    const taskType = taskTypeAt(sim, user, interaction);
    scheduled.push({ user, interaction, complexity, taskType, preferences: preferencesAt(sim, complexity, taskType) });
  }
  return scheduled;
}

/**
 * Runs one policy over the simulation. Users' interactions interleave round by round, so a
 * policy that learns across users can help the later ones; every update happens before the
 * user's next interaction.
 */
export function runPolicy(sim: Simulation, policy: Policy): InteractionRecord[][] {
  const records: InteractionRecord[][] = sim.users.map(() => []);
  const rounds = roundCount(sim);
  for (let round = 0; round < rounds; round++) {
    for (const { user, interaction, complexity, taskType, preferences } of roundInteractions(sim, round)) {
      const context = { complexity, taskType, interaction };
      const decided = policy.choose(user.index, context);
      const { signals, reward } = simulateOutcome(sim, { user, complexity, interaction, choice: decided.choice, preferences });
      policy.update(user.index, { context, choice: decided.choice, reward, started: signals.started });
      records[user.index]!.push(
        interactionRecord({
          user,
          complexity: preferences,
          interaction,
          choice: decided.choice,
          reward,
          confidence: decided.confidence,
          explored: decided.explored ?? null,
        }),
      );
    }
  }
  return records;
}

/** One interaction as the policy answered it: `choice` presented to `user`, judged under the preferences of `complexity`. */
export interface AnsweredInteraction {
  user: SimUser;
  complexity: TaskComplexity;
  interaction: number;
  choice: Choice;
  reward: number;
  confidence: number | null;
  explored: boolean | null;
}

/** What is recorded of a user's interaction that presented `choice` and earned `reward`. */
export function interactionRecord({
  user,
  complexity,
  interaction,
  choice,
  reward,
  confidence,
  explored,
}: AnsweredInteraction): InteractionRecord {
  const best = bestChoice(user, complexity, interaction);
  const driftBest = bestChoice(user, complexity, DRIFT_AFTER + 1);
  const bestValues = DIMENSION_NAMES.map((dim) => choice[dim] === best[dim]);
  return {
    reward,
    bestFraming: bestValues[0]!,
    framingIsDriftBest: choice.framing === driftBest.framing,
    bestValues,
    bestCombination: bestValues.every(Boolean),
    confidence,
    explored,
  };
}

/** Each user's mean of `value` (the reward unless given) over interactions from..to (1-based, inclusive); empty when the run is shorter than `to`. */
function userMeans(
  records: InteractionRecord[][],
  from: number,
  to: number,
  value: (r: InteractionRecord) => number = (r) => r.reward,
): number[] {
  if (records.length === 0 || records[0]!.length < to) return [];
  return records.map((user) => mean(user.slice(from - 1, to).map(value)));
}

/** Mean over users of each user's mean reward over interactions from..to; null when the run is shorter than `to`. */
function meanReward(records: InteractionRecord[][], from: number, to: number): number | null {
  const means = userMeans(records, from, to);
  return means.length === 0 ? null : mean(means);
}

/** Recovery rule: ≥ 7 of the last 10 picks are the user's new best framing. */
export const RECOVERY_WINDOW = 10;
export const RECOVERY_HITS = 7;

/**
 * Interactions after the change until the sliding window of the last 10 picks (pre-change
 * picks included, judged against the new preference) holds ≥ 7 picks of the new best
 * framing; null when that never happens within the run.
 */
export function recoveryOf(user: InteractionRecord[]): number | null {
  for (let k = 1; DRIFT_AFTER + k <= user.length; k++) {
    const end = DRIFT_AFTER + k;
    const window = user.slice(Math.max(0, end - RECOVERY_WINDOW), end);
    if (window.filter((r) => r.framingIsDriftBest).length >= RECOVERY_HITS) return k;
  }
  return null;
}

/**
 * Expected calibration error of `confidence` against the event "the returned combination is
 * the user's best in this context": 10 equal-width bins, Σ_b (n_b / N)·|mean confidence_b −
 * hit rate_b|. Null when the policy reports no confidence.
 */
export function expectedCalibrationError(pairs: ReadonlyArray<{ confidence: number; hit: boolean }>, bins = 10): number | null {
  if (pairs.length === 0) return null;
  const count = new Array<number>(bins).fill(0);
  const conf = new Array<number>(bins).fill(0);
  const hits = new Array<number>(bins).fill(0);
  for (const { confidence, hit } of pairs) {
    const b = Math.min(bins - 1, Math.max(0, Math.floor(confidence * bins)));
    count[b]! += 1;
    conf[b]! += confidence;
    hits[b]! += hit ? 1 : 0;
  }
  let ece = 0;
  for (let b = 0; b < bins; b++)
    if (count[b]! > 0) ece += (count[b]! / pairs.length) * Math.abs(conf[b]! / count[b]! - hits[b]! / count[b]!);
  return ece;
}

/** Mean over users of the share of their interactions from..to where `hit` holds; null without users or when the run is shorter than `to`. */
function shareOf(users: InteractionRecord[][], from: number, to: number, hit: (r: InteractionRecord) => boolean): number | null {
  const shares = userMeans(users, from, to, (r) => (hit(r) ? 1 : 0));
  return shares.length === 0 ? null : mean(shares);
}

/** Mean over users of the share of their interactions from..to that picked their best framing. */
const bestFramingShare = (users: InteractionRecord[][], from: number, to: number) => shareOf(users, from, to, (r) => r.bestFraming);

/** Share of interactions from..to answered off the policy's best; null when the policy does not say. */
function exploredShare(users: InteractionRecord[][], from: number, to: number): number | null {
  if (users.some((user) => user.some((r) => r.explored === null))) return null;
  return shareOf(users, from, to, (r) => r.explored === true);
}

export function summarize(sim: Simulation, records: InteractionRecord[][]): PolicyResult {
  // Best-framing share over interactions 31–40 (the last 10 of the first 40), for the users
  // who do not drift: their preferences are stationary over the whole run.
  const stable = sim.users.filter((u) => !u.drifts).map((u) => records[u.index]!);
  const bestFramingShareLast10 = bestFramingShare(stable, 31, 40);

  // Drift recovery: mean over drifting users of recoveryOf(); a user who never recovers counts
  // as the censored value (interactions after the change + 1), and the figure is null when
  // fewer than half of the drifting users recover (the mean would be meaningless).
  const drifters = sim.users.filter((u) => u.drifts).map((u) => records[u.index]!);
  const recoveries = drifters.map(recoveryOf);
  const recovered = recoveries.filter((k): k is number => k !== null);
  const censored = sim.interactions - DRIFT_AFTER + 1;
  const driftRecoveredShare = drifters.length === 0 ? 0 : recovered.length / drifters.length;
  const driftRecovery = driftRecoveredShare >= 0.5 ? mean(recoveries.map((k) => k ?? censored)) : null;

  const pairs = records.flat().flatMap((r) => (r.confidence === null ? [] : [{ confidence: r.confidence, hit: r.bestCombination }]));
  return {
    metrics: {
      meanReward_1_10: meanReward(records, 1, 10),
      meanReward_11_40: meanReward(records, 11, 40),
      meanReward_41_80: meanReward(records, 41, 80),
      bestFramingShareLast10,
      coldStartReward: meanReward(records, 1, 3),
      driftRecovery,
      ece: expectedCalibrationError(pairs),
      bestStyleShareLast10: shareOf(stable, 31, 40, (r) => r.bestValues[1]!),
      bestComplexityShareLast10: shareOf(stable, 31, 40, (r) => r.bestValues[2]!),
      bestEncouragementShareLast10: shareOf(stable, 31, 40, (r) => r.bestValues[3]!),
      bestAllShareLast10: shareOf(stable, 31, 40, (r) => r.bestCombination),
      exploredShare_1_10: exploredShare(records, 1, 10),
      exploredShare_31_40: exploredShare(records, 31, 40),
      exploredShare_71_80: exploredShare(records, 71, 80),
    },
    meanRewardAll: meanReward(records, 1, sim.interactions) ?? NaN,
    driftRecoveredShare,
    bestFramingShare11to40: bestFramingShare(records, 11, 40),
    perUser: {
      coldStart: userMeans(records, 1, 3),
      reward11to40: userMeans(records, 11, 40),
    },
  };
}
