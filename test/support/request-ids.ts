import type { CarriedDecision } from '../../shared/ids/request-id';

/** A decision as a requestId seals it. */
export function buildCarriedDecision(userId = 'user-1', overrides: Partial<CarriedDecision> = {}): CarriedDecision {
  return {
    userId,
    choice: { framing: 'purpose', style: 'warm', complexityHandling: 'chunked', encouragement: 'moderate' },
    probabilities: { framing: 0.5, style: 0.25, complexityHandling: 1, encouragement: 0.125 },
    context: { taskComplexity: 'medium' },
    ...overrides,
  };
}
