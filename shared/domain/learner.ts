import { z } from 'zod';
import { Dimension, Pins, ProfilePhase, taskComplexitySchema, type Choice } from './arms';
import type { Random } from './random';

/**
 * What the learner conditions a decision on (from the context request). Without `complexity` the
 * task's complexity is unknown: the learner answers from the user's beliefs across complexities.
 */
export const decisionContextSchema = z.object({
  complexity: taskComplexitySchema.optional(),
  taskType: z.string().max(100).optional(),
});
export type DecisionContext = z.infer<typeof decisionContextSchema>;

/** Probability with which each chosen value was selected (logged for offline evaluation). */
export const selectionProbabilitiesSchema = z.object({
  framing: z.number(),
  style: z.number(),
  complexity: z.number(),
  encouragement: z.number(),
});
export type SelectionProbabilities = z.infer<typeof selectionProbabilitiesSchema>;

export interface LearnerDecision {
  choice: Choice;
  /** Selection probability of each chosen value under the learner's policy (1 when pinned). */
  probabilities: SelectionProbabilities;
  /** Dimensions chosen off the current best, to explore. */
  explored: Dimension[];
  /** Probability that `choice` is this user's best combination in this context. */
  confidence: number;
  rationale: string;
}

export interface ProfileSummary {
  /** Learned best value per dimension (what the profile shows when nothing is pinned). */
  best: Choice;
  phase: ProfilePhase;
  interactionCount: number;
}

/**
 * The learning engine behind a small interface so it can be replaced and benchmarked.
 * Implementations are pure: no I/O, deterministic given the `random` source; states and
 * population priors are plain JSON. A `Prior` is what a tenant's users have in common: the
 * worker folds each outcome into a delta with `observe` and merges it with `mergePrior`.
 * States and priors are never mutated (only `observe`'s delta is): an implementation may cache
 * what it derives from a state or prior per object (shared/domain/engine/README.md, "Invariants").
 */
export interface Learner<State = unknown, Prior = unknown> {
  readonly name: string;
  /** A new user's state; its summary shows what the population prior recommends. */
  initialState(prior: Prior): State;
  /**
   * Validates persisted state (converting older formats); a fresh state when it is not usable,
   * after telling `onUnreadable` what was wrong with it (for the operator's log: no values).
   */
  parseState(raw: unknown, onUnreadable?: (issue: string) => void): State;
  emptyPrior(): Prior;
  parsePrior(raw: unknown): Prior;
  decide(state: State, context: DecisionContext, pins: Pins, random: Random, prior: Prior): LearnerDecision;
  /** The state after one outcome; `prior` is used for the stored summary. */
  update(state: State, context: DecisionContext, choice: Choice, reward: number, started: boolean, prior: Prior): State;
  /** Adds one outcome to a population delta: the user's state before it and after `update`. */
  observe(
    delta: Prior,
    prior: Prior,
    before: State,
    after: State,
    context: DecisionContext,
    choice: Choice,
    probabilities: SelectionProbabilities,
    reward: number,
  ): void;
  mergePrior(prior: Prior, delta: Prior): Prior;
  summarize(state: State): ProfileSummary;
  /** What the population prior recommends at a complexity, or across complexities without one (the "population best" policy). */
  populationBest(prior: Prior, context: DecisionContext): Choice;
}
