import { DIMENSIONS, DIMENSION_NAMES, type Choice, type Dimension } from '../arms';
import type { Learner, LearnerDecision, SelectionProbabilities } from '../learner';
import { buildRationale, type ValueEvidence } from '../rationale';
import { mixedMeans, spreadOf } from './complexity-shares';
import { emContribution, expectOutcome } from './expectation';
import { valueEvidence } from './evidence';
import { choosingBeliefs, inferUser, priorBeliefs, shownSlot, type Inference, type PriorBeliefs } from './inference';
import {
  COMPLEXITY_COUNT,
  DIMENSION_OFFSET,
  argmax,
  UNKNOWN_COMPLEXITY,
  VALUE_COUNT,
  cellIndex,
  choiceIndex,
  complexityIndex,
  contextIndex,
  round4,
  valueCount,
} from './layout';
import { emptyPopulation, mergePopulation, observePopulation, parsePopulation, type PopulationPrior } from './population';
import { compilePopulation, type CompiledPopulation } from './population-model';
import { createScratch } from './scratch';
import {
  HISTORY_LENGTH,
  STATE_FORMAT,
  decayOlder,
  emptyHistory,
  emptyOlder,
  engineStateSchema,
  historyFrom,
  historyLength,
  outcomeAt,
  taskSlotOf,
  withTaskType,
  type EngineState,
  type Outcome,
} from './state';
import { computeSummary } from './summary';

/**
 * The learning engine (docs/adr/0009-favourite-model.md): per user and dimension, the posterior
 * probability that each value is the user's favourite at the request's complexity (and task
 * type), under a model whose prior is the tenant's population (population-model.ts, favourite.ts)
 * and whose evidence is the user's rewards, each credited to the four dimensions by mean-field
 * inference (inference.ts). A value is chosen with probability ∝ P̃(favourite)^κ, P̃ the same
 * posterior with fewer followers where the population's favourite is unsure (choosingBeliefs);
 * that probability is logged for offline evaluation; `confidence` is the product over the unpinned
 * dimensions of P(chosen value is the favourite) — the posterior probability that the
 * combination is the user's best in this context. Evidence decays per outcome, and a change
 * detector drops what is out of date when a user's preferences change.
 */

/**
 * Values are chosen with probability ∝ P(favourite)^κ: posterior sampling (κ = 1) explores too
 * much when one value is likely and the rest share the remainder; κ = SHARPNESS was best on the
 * benchmark's tuning seeds for a user's first outcomes. κ then rises with the user's current
 * evidence n (the outcomes in the history, which a detected change shortens):
 *
 *   κ(n) = SHARPNESS + (LATE_SHARPNESS − SHARPNESS) · clamp((n − SHARPEN_FROM) / (SHARPEN_TO − SHARPEN_FROM), 0, 1)
 *
 * so that exploration falls as the user's evidence grows, and returns with a change of
 * preferences (docs/adr/0009-favourite-model.md, decision 4).
 */
const SHARPNESS = 4;
const LATE_SHARPNESS = 6;
const SHARPEN_FROM = 20;
const SHARPEN_TO = 40;

/** κ(n) above, for a user with `outcomes` outcomes in their history. */
export function sharpness(outcomes: number): number {
  const ramp = Math.min(1, Math.max(0, (outcomes - SHARPEN_FROM) / (SHARPEN_TO - SHARPEN_FROM)));
  return SHARPNESS + (LATE_SHARPNESS - SHARPNESS) * ramp;
}
/**
 * Change detection: a one-sided CUSUM of the standardised shortfall of each reward below its
 * prediction, S ← max(0, S − z − CHANGE_SLACK). When S passes CHANGE_THRESHOLD the user's
 * preferences have probably changed: the evidence from before the current excursion of S above
 * 0 is dropped and the excursion's outcomes — those that revealed the change — are kept.
 */
const CHANGE_SLACK = 0.5;
const CHANGE_THRESHOLD = 5;

const D = DIMENSION_NAMES.length;

/**
 * Whether value `chosen` of the k values from `first` is off the most probable favourite: some
 * value is more probable. Equal probabilities (a new tenant's new user: all 1/k) are a tie, not
 * exploration; the tolerance absorbs rounding in sums that are equal in exact arithmetic.
 */
function belowBest(favourite: Float64Array, first: number, k: number, chosen: number): boolean {
  const level = favourite[first + chosen]! * (1 + 1e-9);
  for (let v = 0; v < k; v++) if (favourite[first + v]! > level) return true;
  return false;
}

/** A placeholder summary until computeSummary replaces it: every dimension's first value. */
function firstValues(): Choice {
  const best = {} as Record<Dimension, string>;
  for (const dim of DIMENSION_NAMES) best[dim] = DIMENSIONS[dim].values[0];
  return best as Choice;
}

/**
 * The service's learner: states are EngineStates, the prior is a CompiledPopulation (the
 * stored sums with what the model makes of them) and a batch's delta the bare sums.
 */
export type Engine = Learner<EngineState, CompiledPopulation, PopulationPrior>;

/** The empty prior (a tenant without outcomes), compiled. */
export const emptyPrior = (): CompiledPopulation => compilePopulation(emptyPopulation());

/**
 * A new engine, with its own scratch buffers (scratch.ts) and its own inferences per state: one
 * per process or consumer. Engines share nothing, so two of them may run in one process.
 */
export function createEngine(): Engine {
  const scratch = createScratch();
  /**
   * The beliefs about a user, kept per state object while it lives: a worker reads them for the
   * state before an outcome in update and again in observe, and for the state after it in the
   * summary and at the user's next outcome; the API, for a returning user whose state and
   * prior have not changed since, at every request. Sound because states are never mutated
   * (shared/domain/engine/README.md, "Invariants"); an inference is for one prior object.
   */
  const inferences = new WeakMap<EngineState, Inference>();
  /**
   * A new user's beliefs under a prior, per number of task types tracked (where every inference
   * starts): the same for all users, kept per prior object while it lives, and made the first
   * time a user tracking that many is inferred under it (most tenants' users track none).
   */
  const newUsers = new WeakMap<CompiledPopulation, PriorBeliefs[]>();
  const newUser = (prior: CompiledPopulation, taskTypes: number): PriorBeliefs => {
    let byTaskTypes = newUsers.get(prior);
    if (!byTaskTypes) newUsers.set(prior, (byTaskTypes = []));
    return (byTaskTypes[taskTypes] ??= priorBeliefs(prior, COMPLEXITY_COUNT * (1 + taskTypes), scratch.inference.posterior));
  };
  /** The inference of a state under a prior; `forDecision`, with what a decision chooses by if it is computed now. */
  const infer = (state: EngineState, prior: CompiledPopulation, forDecision = false): Inference => {
    const known = inferences.get(state);
    if (known && known.prior === prior) return known;
    const inference = inferUser(state, prior, newUser(prior, state.taskTypes.length), scratch.inference, forDecision);
    inferences.set(state, inference);
    return inference;
  };

  return {
    name: STATE_FORMAT,

    initialState(prior) {
      const state: EngineState = {
        learner: STATE_FORMAT,
        outcomes: 0,
        history: emptyHistory(),
        taskTypes: [],
        older: emptyOlder(),
        shortfall: 0,
        excursion: 0,
        summary: { best: firstValues(), phase: 'cold_start' },
      };
      state.summary = computeSummary(state, infer(state, prior));
      return state;
    },

    emptyPrior,
    emptyDelta: emptyPopulation,

    decide(state, { context, pins, random }, prior): LearnerDecision {
      // Beliefs in every context, an unknown complexity's included.
      const inference = infer(state, prior, true);
      const favourite = inference.beliefs;
      // What the choice is drawn from; confidence and exploration read the beliefs (ADR 0009, decision 4).
      const leaning = choosingBeliefs(inference, scratch.inference.posterior);
      const weights = scratch.choiceWeights;
      const c = complexityIndex(context.taskComplexity);
      const slot = taskSlotOf(state, context.taskType);
      const here = contextIndex(c, slot);
      const kappa = sharpness(historyLength(state.history));
      const choice = {} as Record<Dimension, string>;
      const probabilities = {} as SelectionProbabilities;
      const explored: Dimension[] = [];
      const evidence: ValueEvidence[] = [];
      let confidence = 1;
      DIMENSION_NAMES.forEach((dim, d) => {
        const pinned = pins[dim];
        if (pinned !== undefined) {
          choice[dim] = pinned;
          probabilities[dim] = 1;
          evidence.push(valueEvidence({ state, prior, c, d, index: choiceIndex(dim, pinned), slot, pinned: true, explored: false }));
          return;
        }
        const k = valueCount(dim);
        const first = here * VALUE_COUNT + DIMENSION_OFFSET[dim];
        let total = 0;
        for (let v = 0; v < k; v++) {
          weights[v] = Math.pow(leaning[first + v]!, kappa);
          total += weights[v]!;
        }
        let u = random() * total;
        let chosen = k - 1;
        for (let v = 0; v < k; v++) {
          u -= weights[v]!;
          if (u < 0) {
            chosen = v;
            break;
          }
        }
        const isExplored = belowBest(favourite, first, k, chosen);
        choice[dim] = DIMENSIONS[dim].values[chosen]!;
        probabilities[dim] = weights[chosen]! / total;
        confidence *= favourite[first + chosen]!;
        if (isExplored) explored.push(dim);
        evidence.push(valueEvidence({ state, prior, c, d, index: chosen, slot, pinned: false, explored: isExplored }));
      });
      return {
        choice: choice as Choice,
        probabilities,
        explored,
        confidence: Math.min(1, Math.max(0, confidence)),
        rationale: buildRationale(evidence, context.taskComplexity, state.outcomes),
      };
    },

    update(state, { context, choice, reward, started }, prior) {
      const inference = infer(state, prior);
      const c = complexityIndex(context.taskComplexity);
      const expected = expectOutcome({ prior, inference, choice, c, slot: taskSlotOf(state, context.taskType), reward });
      const z = (reward - expected.predicted) / prior.predictionSd;
      let shortfall = state.outcomes > 0 ? Math.max(0, state.shortfall - z - CHANGE_SLACK) : 0;
      // On a detected change, only the excursion's outcomes are kept (the newest `excursion` of the history).
      const changed = shortfall > CHANGE_THRESHOLD;
      const dropped = changed ? historyLength(state.history) - state.excursion : 0;
      if (changed) shortfall = 0;
      const kept = changed ? { taskTypes: state.taskTypes, history: historyFrom(state.history, dropped) } : state;
      const { taskTypes, history, slot } = withTaskType(kept, context.taskType);
      const shown = {} as Record<Dimension, number>;
      for (const dim of DIMENSION_NAMES) shown[dim] = choiceIndex(dim, choice[dim]);
      const outcome: Outcome = { taskComplexity: c, taskSlot: slot, shown, reward: round4(reward), started };
      // Full: the oldest outcome leaves the history for the older sums.
      const full = historyLength(history) === HISTORY_LENGTH;
      let leaving = null;
      if (full) {
        const oldest = outcomeAt(history, 0);
        leaving = {
          outcome: oldest,
          // The oldest entry kept is the history's entry number `dropped`, whose credit the inference holds.
          credited: inference.credited.subarray(dropped * D, (dropped + 1) * D),
          slots: DIMENSION_NAMES.map((_, d) => shownSlot(oldest.shown, d)),
          spread: spreadOf(oldest.taskComplexity, inference.shares),
        };
      }
      const next = historyFrom(history, full ? 1 : 0, outcome);
      const result: EngineState = {
        learner: STATE_FORMAT,
        outcomes: state.outcomes + 1,
        history: next,
        taskTypes,
        older: decayOlder(changed ? emptyOlder() : state.older, leaving),
        shortfall: round4(shortfall),
        excursion: shortfall > 0 ? Math.min(historyLength(next), state.excursion + 1) : 0, // (a change resets shortfall to 0)
        summary: state.summary,
      };
      result.summary = computeSummary(result, infer(result, prior));
      return result;
    },

    observe(delta, prior, { before, after, feedback }) {
      const { context, choice, probabilities, reward } = feedback;
      const c = complexityIndex(context.taskComplexity);
      const inference = infer(before, prior);
      const expected = expectOutcome({ prior, inference, choice, c, slot: taskSlotOf(before, context.taskType), reward });
      // EM: the user's beliefs after this outcome, over all of their evidence.
      const now = infer(after, prior);
      // The population knows complexities, not each user's task types; an unknown complexity is spread by the user's shares.
      const at = c === UNKNOWN_COMPLEXITY ? 0 : c;
      observePopulation(delta, {
        offsets: prior.offsets,
        complexity: c,
        ...(c === UNKNOWN_COMPLEXITY ? { shares: inference.shares } : {}),
        cells: expected.cells.map((cell) => cellIndex(at, cell % VALUE_COUNT)),
        probabilities: DIMENSION_NAMES.map((dim) => probabilities[dim]),
        reward,
        credited: expected.credited,
        error: reward - expected.predicted,
        ...emContribution(after, now, prior, scratch.contrast, scratch.em),
      });
    },

    mergePrior: (prior, delta) => compilePopulation(mergePopulation(prior.sums, delta)),

    summarize(state) {
      return { best: state.summary.best, phase: state.summary.phase, interactionCount: state.outcomes };
    },

    populationBest(prior, context) {
      const c = complexityIndex(context.taskComplexity);
      // Without a complexity: the best of the means mixed by how often the population's outcomes are at each.
      const means = c === UNKNOWN_COMPLEXITY ? mixedMeans(prior) : prior.mean;
      const at = c === UNKNOWN_COMPLEXITY ? 0 : c;
      const best = {} as Record<Dimension, string>;
      for (const dim of DIMENSION_NAMES)
        best[dim] = DIMENSIONS[dim].values[argmax(means, cellIndex(at, DIMENSION_OFFSET[dim]), valueCount(dim))]!;
      return best as Choice;
    },
  };
}

/** Where and how a stored state fails its schema, without the values found there. */
function describeIssue(issue: { path: PropertyKey[]; message: string } | undefined): string {
  if (!issue) return `not an ${STATE_FORMAT} state`;
  return `${issue.path.length > 0 ? issue.path.map(String).join('.') : '(state)'}: ${issue.message}`;
}

/** What replaces a stored state that cannot be read: a new user's, under the empty prior (rare: built afresh). */
export const freshState = (): EngineState => createEngine().initialState(emptyPrior());

/**
 * A stored state, checked against its schema; freshState() when it is not one, after telling
 * `onUnreadable` what was wrong with it (for the operator's log: where, never the values found
 * there). The profile repositories read every stored state through this or storedStateSchema.
 */
export function readEngineState(raw: unknown, onUnreadable?: (issue: string) => void): EngineState {
  const parsed = engineStateSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  onUnreadable?.(describeIssue(parsed.error.issues[0]));
  return freshState();
}

/** A state within a stored profile (the Redis cache's JSON): checked, or freshState() without a word. */
export const storedStateSchema = engineStateSchema.catch(freshState);

/** A stored prior, compiled; the empty prior's for anything that is not one. */
export const readPopulation = (raw: unknown): CompiledPopulation => compilePopulation(parsePopulation(raw));
