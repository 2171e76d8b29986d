import { z } from 'zod';
import { Dimension, Pins, ProfilePhase, taskComplexitySchema, type Choice } from './arms';
import type { Random } from './random';

/** What the learner conditions a decision on (from the context request). */
export const decisionContextSchema = z.object({
  complexity: taskComplexitySchema,
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
  confidence: number;
  rationale: string;
}

export interface ProfileSummary {
  /** Learned best value per dimension, context-free. */
  best: Choice;
  phase: ProfilePhase;
  interactionCount: number;
}

/**
 * The learning engine behind a small interface so it can be replaced. Implementations are
 * pure: no I/O, deterministic given the `random` source. State is plain JSON.
 */
export interface Learner<State = unknown> {
  readonly name: string;
  initialState(): State;
  /** Validates persisted state; returns a fresh state when it belongs to another learner. */
  parseState(raw: unknown): State;
  decide(state: State, context: DecisionContext, pins: Pins, random: Random): LearnerDecision;
  update(state: State, context: DecisionContext, choice: Choice, reward: number, started: boolean): State;
  summarize(state: State): ProfileSummary;
}
