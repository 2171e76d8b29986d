import { TASK_COMPLEXITY, type Choice } from '../../shared/domain/arms';
import { createEngine } from '../../shared/domain/engine/engine';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import type { DecisionContext } from '../../shared/domain/learner';
import type { Random } from '../../shared/domain/random';

/**
 * A tenant's population prior built as the worker builds it: `users` users one after another,
 * each served `interactions` times by the engine (decide, update, observe into a delta, merge),
 * with the reward `reward` gives for what was shown in interaction i's context.
 */
export function trainedTenant(
  random: Random,
  users: number,
  interactions: number,
  contextAt: (i: number) => DecisionContext,
  reward: (choice: Choice, random: Random) => number,
): CompiledPopulation {
  const engine = createEngine();
  let prior = engine.emptyPrior();
  for (let user = 0; user < users; user++) {
    let state = engine.initialState(prior);
    for (let i = 0; i < interactions; i++) {
      const context = contextAt(i);
      const decision = engine.decide(state, { context, pins: {}, random }, prior);
      const r = reward(decision.choice, random);
      const feedback = { context, choice: decision.choice, probabilities: decision.probabilities, reward: r, started: r > 0.5 };
      const after = engine.update(state, feedback, prior);
      const delta = engine.emptyDelta();
      engine.observe(delta, prior, { before: state, after, feedback });
      prior = engine.mergePrior(prior, delta);
      state = after;
    }
  }
  return prior;
}

/** The reward of a user who likes the framing `purpose` and nothing else (0.8, else up to 0.2). */
export const likesPurpose = (choice: Choice, random: Random): number => (choice.framing === 'purpose' ? 0.8 : 0.2 * random());

/**
 * A tenant whose users all like the `purpose` framing and nothing else (reward 0.8 with it,
 * below 0.2 without), served over the three complexities in turn: the trained prior
 * `npm run bench:engine` decides with, and the hardest case for telling the dimensions apart
 * (every user ends up shown the same values of all four).
 */
export const unanimousTenant = (random: Random, users: number, interactions = 20): CompiledPopulation =>
  trainedTenant(random, users, interactions, (i) => ({ taskComplexity: TASK_COMPLEXITY[i % 3]! }), likesPurpose);
