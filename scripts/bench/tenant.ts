import { TASK_COMPLEXITY } from '../../shared/domain/arms';
import { engine } from '../../shared/domain/engine/engine';
import type { PopulationPrior } from '../../shared/domain/engine/population';
import type { Random } from '../../shared/domain/random';

/**
 * A tenant whose users all like the `purpose` framing and nothing else (reward 0.8 with it,
 * below 0.2 without), each served `interactions` times by the engine over the three
 * complexities, outcomes folded into the population prior as the worker does: the trained
 * prior `npm run bench:engine` decides with, and the hardest case for telling the dimensions
 * apart (every user ends up shown the same values of all four).
 */
export function unanimousTenant(random: Random, users: number, interactions = 20): PopulationPrior {
  let prior = engine.emptyPrior();
  for (let user = 0; user < users; user++) {
    let state = engine.initialState(prior);
    for (let i = 0; i < interactions; i++) {
      const context = { complexity: TASK_COMPLEXITY[i % 3]! };
      const decision = engine.decide(state, context, {}, random, prior);
      const reward = decision.choice.framing === 'purpose' ? 0.8 : 0.2 * random();
      const after = engine.update(state, context, decision.choice, reward, reward > 0.5, prior);
      const delta = engine.emptyPrior();
      engine.observe(delta, prior, state, after, context, decision.choice, decision.probabilities, reward);
      prior = engine.mergePrior(prior, delta);
      state = after;
    }
  }
  return prior;
}
