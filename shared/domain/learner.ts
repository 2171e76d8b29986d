import { z } from 'zod';
import { Dimension, Pins, ProfilePhase, taskComplexitySchema, type Choice } from './arms';
import type { Random } from './random';

/**
 * What the learner conditions a decision on (from the context request, whose `complexity` is the
 * task's). Without `taskComplexity` it is unknown: the learner answers from the user's beliefs
 * across complexities.
 */
export const decisionContextSchema = z.object({
  taskComplexity: taskComplexitySchema.optional(),
  taskType: z.string().max(100).optional(),
});
export type DecisionContext = z.infer<typeof decisionContextSchema>;

/**
 * A decision's context as the decision log keeps it: the request's fields under the request's
 * names (`complexity` is the task's), with its metadata.
 */
export const loggedContextSchema = z.object({
  /** Absent when the request gave none (the learner's unknown complexity). */
  complexity: taskComplexitySchema.optional(),
  taskType: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type LoggedContext = z.infer<typeof loggedContextSchema>;

/** Probability with which each chosen value was selected (logged for offline evaluation). */
export const selectionProbabilitiesSchema = z.object({
  framing: z.number(),
  style: z.number(),
  complexityHandling: z.number(),
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

/** What a decision is asked to answer: the request's context, the profile's pins and a random source. */
export interface DecisionRequest {
  context: DecisionContext;
  pins: Pins;
  random: Random;
}

/** What an outcome tells the learner about one decision: where, what was shown, how it went. */
export interface Feedback {
  context: DecisionContext;
  choice: Choice;
  reward: number;
  /** Whether the user started the task. */
  started: boolean;
}

/** Feedback with the probabilities its choice was selected with (as logged with the decision). */
export interface LoggedFeedback extends Feedback {
  probabilities: SelectionProbabilities;
}

/** One user's step of learning, as the population sees it: the state before and after `feedback`. */
export interface UserStep<State> {
  before: State;
  after: State;
  feedback: LoggedFeedback;
}

/**
 * The learning engine behind a small interface so it can be replaced and benchmarked.
 * Implementations are deterministic given the `random` source and do no I/O. A `State` is one
 * user's, a `Prior` what a tenant's users have in common; the worker folds each outcome into a
 * `Delta` with `observe` and merges it with `mergePrior`. Both are read from storage once, where
 * they are read (the profile and population repositories), into these types: a learner never
 * sees raw JSON. States and priors are never mutated (only `observe`'s delta is): an
 * implementation may keep what it derives from a state or prior per object
 * (shared/domain/engine/README.md, "Invariants").
 */
export interface Learner<State, Prior, Delta> {
  readonly name: string;
  /** A new user's state; its summary shows what the population prior recommends. */
  initialState(prior: Prior): State;
  /** A tenant's prior before any outcome. */
  emptyPrior(): Prior;
  /** A delta holding no outcome yet. */
  emptyDelta(): Delta;
  decide(state: State, request: DecisionRequest, prior: Prior): LearnerDecision;
  /** The state after one outcome; `prior` is used for the stored summary. */
  update(state: State, feedback: Feedback, prior: Prior): State;
  /** Adds one outcome to a population delta: the user's state before it and after `update`. */
  observe(delta: Delta, prior: Prior, step: UserStep<State>): void;
  /** `prior` with `delta` added: a new prior (neither input is changed). */
  mergePrior(prior: Prior, delta: Delta): Prior;
  summarize(state: State): ProfileSummary;
  /** What the population prior recommends at a complexity, or across complexities without one (the "population best" policy). */
  populationBest(prior: Prior, context: DecisionContext): Choice;
}
