import { DIMENSIONS, DIMENSION_NAMES, type Choice, type TaskComplexity } from '../../shared/domain/arms';
import { thompsonLearner, type ThompsonState } from '../../shared/domain/thompson-learner';

/**
 * A state in which `best` is the best value of every dimension at `complexity`: `best` is
 * rewarded `goodReward` `rounds` times, and every other value of each dimension is tried
 * `rounds` times with `badReward`.
 */
export function buildLearnedState(
  best: Choice,
  {
    complexity = 'high',
    rounds = 10,
    goodReward = 1,
    badReward = 0,
  }: Partial<{ complexity: TaskComplexity; rounds: number; goodReward: number; badReward: number }> = {},
  state: ThompsonState = thompsonLearner.initialState(),
): ThompsonState {
  const widest = Math.max(...DIMENSION_NAMES.map((dim) => DIMENSIONS[dim].values.length));
  for (let r = 0; r < rounds; r++) {
    state = thompsonLearner.update(state, { complexity }, best, goodReward, true);
    for (let k = 1; k < widest; k++) {
      // shift every dimension off its best value by k (mod its size, skipping the best itself)
      const other = {} as Record<string, string>;
      for (const dim of DIMENSION_NAMES) {
        const values = DIMENSIONS[dim].values as readonly string[];
        const offset = 1 + ((k - 1) % (values.length - 1));
        other[dim] = values[(values.indexOf(best[dim]) + offset) % values.length]!;
      }
      state = thompsonLearner.update(state, { complexity }, other as Choice, badReward, badReward > 0);
    }
  }
  return state;
}
