import { DIMENSIONS, DIMENSION_NAMES, TASK_COMPLEXITY, type Choice, type Dimension, type TaskComplexity } from '../../shared/domain/arms';
import { seededRandom } from '../../shared/domain/random';
import type { Policy } from './policies';
import { mean } from './stats';
import { bestChoice, complexityAt, mixSeed, OWN_BEST_SWITCH, preferencesAt, simulateOutcome, type Simulation } from './simulator';

/**
 * A reference for reading the engine's targets, not a competitor: a Bayes policy that knows how
 * the simulator makes its users — the population's favourite value per (complexity, dimension),
 * the share of users who follow it (the world's majority share), how often a user's own favourite framing
 * changes with complexity (OWN_BEST_SWITCH), and the mean and spread of the reward on a user's
 * favourite framing and on the others — but none of a user's hidden values.
 *
 * For the framing it keeps the exact posterior over "this user follows the population" vs
 * "this user has an own favourite g", with Gaussian reward likelihoods, and serves the most
 * probable favourite in the context (greedy: its prior is exact, so it needs no exploration);
 * the other dimensions, whose effects are too small to learn per user, get the population's
 * favourite. It does not model the change of preferences after interaction 40, so only its
 * figures up to interaction 40 are meaningful.
 */

const FRAMING_COUNT = DIMENSIONS.framing.values.length;
const COMPLEXITIES = TASK_COMPLEXITY.length;

/** Mean reward with the user's favourite framing and with another one, and the reward's spread. */
export interface RewardModel {
  favourite: number;
  other: number;
  sd: number;
}

const favouriteOf = (sim: Simulation, complexity: TaskComplexity, dim: Dimension): number => sim.population[complexity][dim].indexOf(1);

/** The population's favourite combination at a complexity. */
function populationChoice(sim: Simulation, complexity: TaskComplexity): Choice {
  const choice = {} as Record<Dimension, string>;
  for (const dim of DIMENSION_NAMES) choice[dim] = DIMENSIONS[dim].values[favouriteOf(sim, complexity, dim)]!;
  return choice as Choice;
}

/**
 * The reward model, measured on the simulator itself: every user's first 40 interactions served
 * the population's choice with the user's favourite framing, and with another framing.
 */
export function measureRewardModel(sim: Simulation): RewardModel {
  const random = seededRandom(mixSeed(sim.seed, 300));
  const favourite: number[] = [];
  const other: number[] = [];
  for (const user of sim.users) {
    for (let interaction = 1; interaction <= Math.min(40, sim.interactions); interaction++) {
      const complexity = complexityAt(sim, user, interaction);
      const best = user.before[complexity].framing.indexOf(1);
      const wrong = (best + 1 + Math.floor(random() * (FRAMING_COUNT - 1))) % FRAMING_COUNT;
      for (const [index, into] of [
        [best, favourite],
        [wrong, other],
      ] as const) {
        const choice = { ...populationChoice(sim, complexity), framing: DIMENSIONS.framing.values[index]! };
        into.push(simulateOutcome(sim, { user, complexity, interaction, choice }).reward);
      }
    }
  }
  const m1 = mean(favourite);
  const m0 = mean(other);
  const pooled =
    (favourite.reduce((s, x) => s + (x - m1) ** 2, 0) + other.reduce((s, x) => s + (x - m0) ** 2, 0)) / (favourite.length + other.length);
  return { favourite: m1, other: m0, sd: Math.sqrt(pooled) };
}

/** P(favourite framing = f) at complexity c, from log-likelihoods logLik[c][f] of "f is the favourite at c". */
export function favouritePosterior(
  logLik: readonly number[][],
  populationFavourite: readonly number[],
  c: number,
  majorityShare: number,
): number[] {
  const like = logLik.map((row) => {
    const top = Math.max(...row);
    return { scale: top, values: row.map((l) => Math.exp(l - top)) };
  });
  // Scales cancel between the two types except for a common factor, so work relative to them.
  const follower = majorityShare * like.reduce((p, { values }, k) => p * values[populationFavourite[k]!]!, 1);
  const marginal = new Array<number>(FRAMING_COUNT).fill(0);
  const switchShare = OWN_BEST_SWITCH / (FRAMING_COUNT - 1);
  let own = 0;
  for (let g = 0; g < FRAMING_COUNT; g++) {
    // Own favourite g: at each complexity the favourite is g, or with OWN_BEST_SWITCH another value.
    const perComplexity = like.map(({ values }) => values.reduce((s, l, f) => s + l * (f === g ? 1 - OWN_BEST_SWITCH : switchShare), 0));
    const weight = ((1 - majorityShare) / FRAMING_COUNT) * perComplexity.reduce((p, x) => p * x, 1);
    own += weight;
    for (let f = 0; f < FRAMING_COUNT; f++) {
      const prior = f === g ? 1 - OWN_BEST_SWITCH : switchShare;
      marginal[f]! += (weight * prior * like[c]!.values[f]!) / perComplexity[c]!;
    }
  }
  marginal[populationFavourite[c]!]! += follower;
  const total = follower + own;
  return marginal.map((p) => p / total);
}

/**
 * A ceiling for reading the 0.9 × oracle target, not a policy that could exist: it knows each
 * user's best framing (under the preferences that apply) from the first interaction and serves
 * the population's favourites of the other dimensions, as the Bayes reference does. What it
 * lacks against the oracle is each user's own best style, complexity handling and
 * encouragement; a policy that learns those at the population's level cannot earn more.
 */
export function framingKnownPolicy(sim: Simulation): Policy {
  return {
    name: 'framingKnown',
    choose(userId, context) {
      const preferences = preferencesAt(sim, context.complexity, context.taskType);
      const best = bestChoice(sim.users[userId]!, preferences, context.interaction);
      return { choice: { ...populationChoice(sim, preferences), framing: best.framing }, probability: 1, confidence: null };
    },
    update() {},
  };
}

export function bayesReferencePolicy(sim: Simulation, model: RewardModel = measureRewardModel(sim)): Policy {
  const logLik = new Map<number, number[][]>();
  const populationFavourite = TASK_COMPLEXITY.map((complexity) => favouriteOf(sim, complexity, 'framing'));
  const stateOf = (userId: number) => {
    let state = logLik.get(userId);
    if (!state) {
      state = Array.from({ length: COMPLEXITIES }, () => new Array<number>(FRAMING_COUNT).fill(0));
      logLik.set(userId, state);
    }
    return state;
  };
  return {
    name: 'bayesReference',
    choose(userId, context) {
      // It knows the simulator, so which complexity's preferences apply (in a world where task types change them).
      const preferences = preferencesAt(sim, context.complexity, context.taskType);
      const c = TASK_COMPLEXITY.indexOf(preferences);
      const posterior = favouritePosterior(stateOf(userId), populationFavourite, c, sim.world.majorityShare);
      const framing = posterior.indexOf(Math.max(...posterior));
      return {
        choice: { ...populationChoice(sim, preferences), framing: DIMENSIONS.framing.values[framing]! },
        probability: 1,
        confidence: null,
      };
    },
    update(userId, { context, choice, reward }) {
      const row = stateOf(userId)[TASK_COMPLEXITY.indexOf(preferencesAt(sim, context.complexity, context.taskType))]!;
      const served = (DIMENSIONS.framing.values as readonly string[]).indexOf(choice.framing);
      const variance = model.sd * model.sd;
      for (let f = 0; f < FRAMING_COUNT; f++) {
        const expected = f === served ? model.favourite : model.other;
        row[f]! -= ((reward - expected) * (reward - expected)) / (2 * variance);
      }
    },
  };
}
