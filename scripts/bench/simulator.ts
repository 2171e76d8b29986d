import { DIMENSIONS, DIMENSION_NAMES, TASK_COMPLEXITY, type Choice, type Dimension, type TaskComplexity } from '../../shared/domain/arms';
import { seededRandom, type Random } from '../../shared/domain/random';
import { computeReward, type OutcomeSignals } from '../../shared/domain/reward';

/**
 * Seeded simulator of end users for `npm run bench:learning`.
 *
 * Each user has, per task complexity and per dimension, a hidden utility for every value; the
 * value with utility 1 is that user's best. A population best exists per (complexity,
 * dimension) and a user shares it with the world's majority share (independently per
 * dimension); otherwise the user has an own best, mostly the same at every complexity. The
 * presented combination sets a latent success probability (framing matters most); outcome
 * signals are drawn from it with noise and some signals missing, and turned into a reward by
 * computeReward (the one definition). DRIFT_SHARE of the users change every best
 * value after interaction DRIFT_AFTER.
 *
 * The worlds and their calibration are documented in docs/BENCHMARKS.md ("The simulated worlds").
 */

/** Interactions per user unless --interactions says otherwise. */
export const DEFAULT_INTERACTIONS = 80;
/** Share of users who share the population's best value, per dimension (default world). */
export const MAJORITY_SHARE = 0.6;
export const DRIFT_SHARE = 0.25;
/** Drifting users' new preferences apply from interaction DRIFT_AFTER + 1 on. */
export const DRIFT_AFTER = 40;
/** Users join one after another over this many rounds, so later users meet a trained population. */
const ARRIVAL_ROUNDS = 40;
/**
 * The kind of population simulated: how strongly and how individually each dimension matters.
 * `default` is the world the engine's constants were tuned in; the others check that its
 * standing does not hang on it. Each world's generative model is in docs/BENCHMARKS.md.
 */
export interface World {
  /** Share of users who share the population's best framing. */
  majorityShare: number;
  /** Share of users who share the population's best value of each of the three other dimensions (0: every user has their own). */
  minorMajorityShare: number;
  /** How much each dimension moves the latent success probability from its worst to its best value. */
  weights: Record<Dimension, number>;
  /** Each request carries one of this many task types, at random (0: requests carry none). */
  taskTypes: number;
  /** Whether the task type changes the user's preferences (preferencesAt). */
  typesMatter: boolean;
}
const DEFAULT_WEIGHTS = { framing: 0.62, style: 0.05, complexityHandling: 0.05, encouragement: 0.03 };
/** The three other dimensions each worth half of the framing. */
const HALF_WEIGHTS = { framing: 0.34, style: 0.17, complexityHandling: 0.17, encouragement: 0.17 };
const UNTYPED = { taskTypes: 0, typesMatter: false };
const MAJORITY = { majorityShare: MAJORITY_SHARE, minorMajorityShare: MAJORITY_SHARE };
export const WORLDS = {
  default: { ...MAJORITY, weights: DEFAULT_WEIGHTS, ...UNTYPED },
  'individual-minor': { majorityShare: MAJORITY_SHARE, minorMajorityShare: 0, weights: HALF_WEIGHTS, ...UNTYPED },
  'equal-effects': { ...MAJORITY, weights: { framing: 0.2, style: 0.2, complexityHandling: 0.2, encouragement: 0.2 }, ...UNTYPED },
  'popular-minor': { majorityShare: MAJORITY_SHARE, minorMajorityShare: 0.75, weights: HALF_WEIGHTS, ...UNTYPED },
  'weak-majority': { majorityShare: 0.2, minorMajorityShare: 0.2, weights: DEFAULT_WEIGHTS, ...UNTYPED },
  'strong-minor': { ...MAJORITY, weights: { framing: 0.42, style: 0.12, complexityHandling: 0.12, encouragement: 0.08 }, ...UNTYPED },
  'task-types': { ...MAJORITY, weights: DEFAULT_WEIGHTS, taskTypes: 3, typesMatter: false },
  'typed-preferences': { ...MAJORITY, weights: DEFAULT_WEIGHTS, taskTypes: 3, typesMatter: true },
} satisfies Record<string, World>;
export type WorldName = keyof typeof WORLDS;
/** The worlds `bench:learning` runs unless told one: the default, and the three that move the minor dimensions' weight and individuality. */
export const BENCH_WORLDS: readonly WorldName[] = ['default', 'individual-minor', 'equal-effects', 'popular-minor'];
/** Harder tasks are started less often whatever the presentation. */
const COMPLEXITY_PENALTY: Record<TaskComplexity, number> = { low: 0, medium: 0.04, high: 0.08 };
/** A minority user's own best value changes with the task complexity with this probability. */
export const OWN_BEST_SWITCH = 0.3;
/** Non-best values get utilities in [0, OTHER_UTILITY_MAX). */
const OTHER_UTILITY_MAX = 0.25;

/** utility[complexity][dimension][valueIndex] ∈ [0,1]; exactly one value per row has utility 1. */
export type Utilities = Record<TaskComplexity, Record<Dimension, number[]>>;

export interface SimUser {
  index: number;
  /** Base success probability before the presentation's effect. */
  base: number;
  /** Probability of each task complexity for this user's tasks. */
  complexityMix: [number, number, number];
  drifts: boolean;
  before: Utilities;
  /** Utilities after the drift (the same object as `before` for users who do not drift). */
  after: Utilities;
}

export interface Simulation {
  seed: number;
  world: World;
  /** Interactions per user. */
  interactions: number;
  users: SimUser[];
  /** The population's utilities: its favourite value per (complexity, dimension) has utility 1. */
  population: Utilities;
  /** Round at which each user's first interaction happens. */
  arrival: number[];
}

/** Derives an independent seed from a seed and some integers (murmur3-style finaliser). */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

const pick = (n: number, random: Random): number => Math.min(n - 1, Math.floor(random() * n));

function otherUtilities(n: number, best: number, random: Random): number[] {
  return Array.from({ length: n }, (_, i) => (i === best ? 1 : random() * OTHER_UTILITY_MAX));
}

/** Population utilities: a best value per (complexity, dimension) that differs across complexities. */
function populationUtilities(random: Random): Utilities {
  const result = {} as Utilities;
  const previousBest = {} as Record<Dimension, number>;
  for (const complexity of TASK_COMPLEXITY) {
    result[complexity] = {} as Record<Dimension, number[]>;
    for (const dim of DIMENSION_NAMES) {
      const n = DIMENSIONS[dim].values.length;
      let best = pick(n, random);
      // Make the context matter: the next complexity's best differs from the previous one's.
      if (previousBest[dim] === best) best = (best + 1 + pick(n - 1, random)) % n;
      previousBest[dim] = best;
      result[complexity][dim] = otherUtilities(n, best, random);
    }
  }
  return result;
}

/**
 * An individual's utilities: the population's (with noise) for majority dimensions; otherwise
 * an own best value, the same at every complexity except with probability OWN_BEST_SWITCH.
 */
function userUtilities(population: Utilities, random: Random, majority: Record<Dimension, boolean>): Utilities {
  const result = {} as Utilities;
  const own = {} as Record<Dimension, number>;
  for (const dim of DIMENSION_NAMES) own[dim] = pick(DIMENSIONS[dim].values.length, random);
  for (const complexity of TASK_COMPLEXITY) {
    result[complexity] = {} as Record<Dimension, number[]>;
    for (const dim of DIMENSION_NAMES) {
      const pop = population[complexity][dim];
      if (majority[dim]) {
        result[complexity][dim] = pop.map((u) => (u === 1 ? 1 : Math.min(OTHER_UTILITY_MAX, Math.max(0, u + (random() - 0.5) * 0.3))));
      } else {
        const best = random() < OWN_BEST_SWITCH ? (own[dim] + 1 + pick(pop.length - 1, random)) % pop.length : own[dim];
        result[complexity][dim] = otherUtilities(pop.length, best, random);
      }
    }
  }
  return result;
}

/** Drifted utilities: a new own best per dimension, never the old best at that complexity. */
function driftedUtilities(before: Utilities, random: Random): Utilities {
  const result = {} as Utilities;
  const own = {} as Record<Dimension, number>;
  for (const dim of DIMENSION_NAMES) own[dim] = pick(DIMENSIONS[dim].values.length, random);
  for (const complexity of TASK_COMPLEXITY) {
    result[complexity] = {} as Record<Dimension, number[]>;
    for (const dim of DIMENSION_NAMES) {
      const old = before[complexity][dim];
      const oldBest = old.indexOf(1);
      const best = own[dim] !== oldBest ? own[dim] : (oldBest + 1 + pick(old.length - 1, random)) % old.length;
      result[complexity][dim] = otherUtilities(old.length, best, random);
    }
  }
  return result;
}

export function createSimulation(
  seed: number,
  userCount: number,
  interactions = DEFAULT_INTERACTIONS,
  world: World = WORLDS.default,
): Simulation {
  const random = seededRandom(mixSeed(seed, 1));
  const population = populationUtilities(random);
  const users: SimUser[] = [];
  for (let index = 0; index < userCount; index++) {
    const majority = {} as Record<Dimension, boolean>;
    for (const dim of DIMENSION_NAMES) majority[dim] = random() < (dim === 'framing' ? world.majorityShare : world.minorMajorityShare);
    const before = userUtilities(population, random, majority);
    const drifts = random() < DRIFT_SHARE;
    const weights = [0.5 + random(), 0.5 + random(), 0.5 + random()];
    const total = weights[0]! + weights[1]! + weights[2]!;
    users.push({
      index,
      base: 0.15 + random() * 0.05,
      complexityMix: [weights[0]! / total, weights[1]! / total, weights[2]! / total],
      drifts,
      before,
      after: drifts ? driftedUtilities(before, random) : before,
    });
  }
  const arrival = users.map((u) => Math.floor((u.index * ARRIVAL_ROUNDS) / Math.max(1, userCount)));
  return { seed, world, interactions, users, population, arrival };
}

/** Utilities in force at a 1-based interaction number. */
export const utilitiesAt = (user: SimUser, interaction: number): Utilities => (interaction > DRIFT_AFTER ? user.after : user.before);

/** Task complexity of a user's interaction (the same for every policy given the seed). */
export function complexityAt(sim: Simulation, user: SimUser, interaction: number): TaskComplexity {
  const u = seededRandom(mixSeed(sim.seed, 2, user.index, interaction))();
  const [low, medium] = user.complexityMix;
  return u < low ? 'low' : u < low + medium ? 'medium' : 'high';
}

/** The user's hidden best combination for this complexity at this interaction. */
export function bestChoice(user: SimUser, complexity: TaskComplexity, interaction: number): Choice {
  const utilities = utilitiesAt(user, interaction)[complexity];
  const best = {} as Record<Dimension, string>;
  for (const dim of DIMENSION_NAMES) best[dim] = DIMENSIONS[dim].values[utilities[dim].indexOf(1)]!;
  return best as Choice;
}

/** The task type of a user's interaction (the same for every policy given the seed); undefined in a world without task types. */
export function taskTypeAt(sim: Simulation, user: SimUser, interaction: number): string | undefined {
  if (sim.world.taskTypes === 0) return undefined;
  const u = seededRandom(mixSeed(sim.seed, 4, user.index, interaction))();
  return `type-${Math.min(sim.world.taskTypes - 1, Math.floor(u * sim.world.taskTypes))}`;
}

/**
 * The complexity whose preferences apply to a task: its own, except in a world where task types
 * matter, where type j at complexity c gets the user's preferences of complexity (c + j) mod 3 —
 * so a user's favourites depend on the kind of task, and followers' on more than the population's
 * favourite at the request's complexity.
 */
export function preferencesAt(sim: Simulation, complexity: TaskComplexity, taskType: string | undefined): TaskComplexity {
  if (!sim.world.typesMatter || taskType === undefined) return complexity;
  const j = Number(taskType.slice('type-'.length));
  return TASK_COMPLEXITY[(TASK_COMPLEXITY.indexOf(complexity) + j) % TASK_COMPLEXITY.length]!;
}

/** A task presented to a user: at their interaction number `interaction`, at `complexity`, judged under the preferences of `preferences` (the complexity's own unless task types change them). */
export interface PresentedTask {
  user: SimUser;
  complexity: TaskComplexity;
  interaction: number;
  choice: Choice;
  preferences?: TaskComplexity;
}

/**
 * Latent probability that the user starts (and does well on) the task presented this way:
 * harder tasks less often, and the values' utilities under the preferences that apply.
 */
export function successProbability(
  world: World,
  { user, complexity, interaction, choice, preferences = complexity }: PresentedTask,
): number {
  const utilities = utilitiesAt(user, interaction)[preferences];
  let p = user.base - COMPLEXITY_PENALTY[complexity];
  for (const dim of DIMENSION_NAMES) {
    const index = (DIMENSIONS[dim].values as readonly string[]).indexOf(choice[dim]);
    p += world.weights[dim] * utilities[dim][index]!;
  }
  return Math.min(0.97, Math.max(0.03, p));
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

/**
 * Noisy, partial outcome signals for one interaction. The noise is keyed by (seed, user,
 * interaction) so every policy meets the same luck when it presents the same combination.
 */
export function simulateOutcome(sim: Simulation, presented: PresentedTask) {
  const random = seededRandom(mixSeed(sim.seed, 3, presented.user.index, presented.interaction));
  const p = successProbability(sim.world, presented);
  const started = random() < p;
  const signals: OutcomeSignals = { started };
  if (started) {
    if (random() < 0.8) signals.completed = random() < clamp01(0.3 + 0.65 * p);
    if (random() < 0.6) signals.timeToStart = -Math.log(1 - random()) * 900 * (1.3 - p);
    if (random() < 0.4) signals.flowState = random() < 0.8 * p;
    if (random() < 0.5) signals.satisfaction = clamp01(p + (random() - 0.5) * 0.5);
  } else {
    if (random() < 0.5) signals.completed = false;
    if (random() < 0.2) signals.satisfaction = clamp01(0.1 + random() * 0.3);
  }
  return { signals, reward: computeReward(signals) };
}
