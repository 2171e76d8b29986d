import { COMPLEXITY_HANDLING, DIMENSION_NAMES, ENCOURAGEMENT, FRAMINGS, STYLES, TASK_COMPLEXITY } from '../../shared/domain/arms';

/**
 * The value lists whose indices are stored (learner states, population priors, requestIds), as
 * they were when stored data began to use them. A list may grow at its end; a value moved or
 * removed would make every stored index after it name another value, so these must fail.
 */
const STORED_ORDER = {
  FRAMINGS: ['micro_steps', 'time_boxed', 'purpose', 'challenge', 'curiosity'],
  STYLES: ['direct', 'warm', 'structured', 'playful'],
  COMPLEXITY_HANDLING: ['chunked', 'scaffolded', 'whole'],
  ENCOURAGEMENT: ['minimal', 'moderate', 'enthusiastic'],
  TASK_COMPLEXITY: ['low', 'medium', 'high'],
  DIMENSION_NAMES: ['framing', 'style', 'complexityHandling', 'encouragement'],
} as const;

const CURRENT: Record<keyof typeof STORED_ORDER, readonly string[]> = {
  FRAMINGS,
  STYLES,
  COMPLEXITY_HANDLING,
  ENCOURAGEMENT,
  TASK_COMPLEXITY,
  DIMENSION_NAMES,
};

describe('value lists whose indices are stored', () => {
  it.each(Object.entries(STORED_ORDER))('%s keeps its stored values at their indices (only appends allowed)', (name, stored) => {
    const current = CURRENT[name as keyof typeof STORED_ORDER];
    expect(current.slice(0, stored.length)).toEqual(stored);
  });
});
