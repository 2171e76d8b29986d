import { DIMENSIONS, DIMENSION_NAMES, type Choice, type Dimension, type TaskComplexity } from '../../shared/domain/arms';
import type { Learner, SelectionProbabilities } from '../../shared/domain/learner';
import { probabilityBest, type BetaParams } from './beta-probability-best';
import { sampleBeta, type Random } from '../../shared/domain/random';
import { bestChoice, preferencesAt, type Simulation } from './simulator';

/**
 * What a policy sees of an interaction: the request context (complexity, and the task type in
 * worlds that send one) plus its 1-based number for the user.
 */
export interface BenchContext {
  complexity: TaskComplexity;
  taskType?: string | undefined;
  interaction: number;
}

export interface PolicyChoice {
  choice: Choice;
  /** Probability with which the policy selected this combination (product over dimensions). */
  probability: number;
  /** The policy's probability that `choice` is the user's best in this context; null if it has none. */
  confidence: number | null;
  /** Whether some dimension was chosen off the policy's current best, to explore; absent when the policy does not say. */
  explored?: boolean;
}

/** What an interaction's outcome tells a policy: where, what was shown, how it went. */
export interface BenchFeedback {
  context: BenchContext;
  choice: Choice;
  reward: number;
  started: boolean;
}

/** The one small interface every benchmarked policy implements. */
export interface Policy {
  readonly name: string;
  choose(userId: number, context: BenchContext): PolicyChoice;
  update(userId: number, feedback: BenchFeedback): void;
}

export const valuesOf = (dim: Dimension): readonly string[] => DIMENSIONS[dim].values;
export const indexOf = (dim: Dimension, value: string): number => valuesOf(dim).indexOf(value);
export const uniformIndex = (n: number, random: Random): number => Math.min(n - 1, Math.floor(random() * n));

/** Index of the largest value; ties broken uniformly at random. Returns the index and the tie count. */
export function argmaxRandomTie(values: readonly number[], random: Random): { index: number; ties: number } {
  let max = -Infinity;
  for (const v of values) if (v > max) max = v;
  const tied: number[] = [];
  values.forEach((v, i) => {
    if (v === max) tied.push(i);
  });
  return { index: tied[uniformIndex(tied.length, random)]!, ties: tied.length };
}

/** Uniform random over every dimension's values. */
export function randomPolicy(random: Random): Policy {
  return {
    name: 'random',
    choose() {
      const choice = {} as Record<Dimension, string>;
      let probability = 1;
      for (const dim of DIMENSION_NAMES) {
        const values = valuesOf(dim);
        choice[dim] = values[uniformIndex(values.length, random)]!;
        probability /= values.length;
      }
      return { choice: choice as Choice, probability, confidence: null };
    },
    update() {},
  };
}

/**
 * Per-user ε-greedy, per dimension, conditioned on task complexity: with probability ε a
 * uniform value, else the value with the highest mean reward for this user at this
 * complexity (values not yet tried there count as best, ties broken at random).
 */
export function epsilonGreedyPolicy(random: Random, epsilon = 0.2): Policy {
  type Stats = Record<Dimension, { n: number[]; sum: number[] }>;
  const stats = new Map<string, Stats>();
  const statsOf = (userId: number, complexity: TaskComplexity): Stats => {
    const key = `${userId}:${complexity}`;
    let s = stats.get(key);
    if (!s) {
      s = {} as Stats;
      for (const dim of DIMENSION_NAMES) s[dim] = { n: valuesOf(dim).map(() => 0), sum: valuesOf(dim).map(() => 0) };
      stats.set(key, s);
    }
    return s;
  };
  return {
    name: 'epsilonGreedy',
    choose(userId, context) {
      const s = statsOf(userId, context.complexity);
      const choice = {} as Record<Dimension, string>;
      let probability = 1;
      for (const dim of DIMENSION_NAMES) {
        const { n, sum } = s[dim];
        const means = n.map((count, i) => (count === 0 ? Infinity : sum[i]! / count));
        const greedy = argmaxRandomTie(means, random);
        const k = n.length;
        const chosen = random() < epsilon ? uniformIndex(k, random) : greedy.index;
        const isGreedy = means[chosen] === means[greedy.index];
        probability *= epsilon / k + (isGreedy ? (1 - epsilon) / greedy.ties : 0);
        choice[dim] = valuesOf(dim)[chosen]!;
      }
      return { choice: choice as Choice, probability, confidence: null };
    },
    update(userId, { context, choice, reward }) {
      const s = statsOf(userId, context.complexity);
      for (const dim of DIMENSION_NAMES) {
        const i = indexOf(dim, choice[dim]);
        s[dim].n[i]! += 1;
        s[dim].sum[i]! += reward;
      }
    },
  };
}

/**
 * Non-personalised Thompson sampling: one Beta posterior per (complexity, dimension, value)
 * shared by all users, updated with the fractional reward. Confidence is the posterior
 * probability that the chosen values are the best ones (product over dimensions).
 */
export function pooledThompsonPolicy(random: Random): Policy {
  const posteriors = new Map<string, BetaParams[]>();
  const paramsOf = (complexity: TaskComplexity, dim: Dimension): BetaParams[] => {
    const key = `${complexity}:${dim}`;
    let params = posteriors.get(key);
    if (!params) {
      params = valuesOf(dim).map(() => ({ alpha: 1, beta: 1 }));
      posteriors.set(key, params);
    }
    return params;
  };
  return {
    name: 'pooledThompson',
    choose(_userId, context) {
      const choice = {} as Record<Dimension, string>;
      let probability = 1;
      for (const dim of DIMENSION_NAMES) {
        const params = paramsOf(context.complexity, dim);
        const draws = params.map(({ alpha, beta }) => sampleBeta(alpha, beta, random));
        const chosen = argmaxRandomTie(draws, random).index;
        probability *= probabilityBest(params)[chosen]!;
        choice[dim] = valuesOf(dim)[chosen]!;
      }
      return { choice: choice as Choice, probability, confidence: probability };
    },
    update(_userId, { context, choice, reward }) {
      for (const dim of DIMENSION_NAMES) {
        const cell = paramsOf(context.complexity, dim)[indexOf(dim, choice[dim])]!;
        cell.alpha += reward;
        cell.beta += 1 - reward;
      }
    },
  };
}

/** Knows each user's current hidden best in every context (the ceiling). */
export function oraclePolicy(sim: Simulation): Policy {
  return {
    name: 'oracle',
    choose(userId, context) {
      const choice = bestChoice(sim.users[userId]!, preferencesAt(sim, context.complexity, context.taskType), context.interaction);
      return { choice, probability: 1, confidence: 1 };
    },
    update() {},
  };
}

/** The request context the service would see: complexity, and the task type when there is one. */
const requestContext = ({ complexity, taskType }: BenchContext) =>
  taskType === undefined ? { taskComplexity: complexity } : { taskComplexity: complexity, taskType };

/** A policy running the service's engine, with what it has learned open to inspection. */
export interface EnginePolicy<State, Prior> extends Policy {
  /** The tenant's population prior as it stands (unmerged outcomes aside). */
  population(): Prior;
  /** A user's learner state as it stands. */
  state(userId: number): State;
}

/**
 * The service's engine, through its Learner interface, as the service runs it: one learner
 * state per simulated user and one population prior for the tenant. decide(state, { context: {complexity,
 * taskType}, no pins, random }, prior); after each outcome the worker's two steps — observe() into a delta
 * with the decision's logged selection probabilities, mergePrior() — then update(). Whatever
 * `learner` is passed in is measured, so an improved engine is measured by the same benchmark.
 * With `mergeEvery` > 1 the deltas of that many outcomes are merged at once, as the worker
 * merges a batch (the benchmark merges every outcome).
 */
export function enginePolicy<State, Prior, Delta>(
  learner: Learner<State, Prior, Delta>,
  random: Random,
  mergeEvery = 1,
): EnginePolicy<State, Prior> {
  let prior = learner.emptyPrior();
  let delta = learner.emptyDelta();
  let unmerged = 0;
  const states = new Map<number, State>();
  const logged = new Map<number, SelectionProbabilities>();
  const stateOf = (userId: number): State => states.get(userId) ?? learner.initialState(prior);
  return {
    name: 'engine',
    choose(userId, context) {
      const decision = learner.decide(stateOf(userId), { context: requestContext(context), pins: {}, random }, prior);
      const p = decision.probabilities;
      logged.set(userId, p);
      return {
        choice: decision.choice,
        probability: p.framing * p.style * p.complexityHandling * p.encouragement,
        confidence: decision.confidence,
        explored: decision.explored.length > 0,
      };
    },
    update(userId, { context, choice, reward, started }) {
      const state = stateOf(userId);
      const feedback = { context: requestContext(context), choice, probabilities: logged.get(userId)!, reward, started };
      const after = learner.update(state, feedback, prior);
      learner.observe(delta, prior, { before: state, after, feedback });
      if (++unmerged >= mergeEvery) {
        prior = learner.mergePrior(prior, delta);
        delta = learner.emptyDelta();
        unmerged = 0;
      }
      states.set(userId, after);
    },
    population: () => prior,
    state: stateOf,
  };
}
