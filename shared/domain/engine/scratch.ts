import { contrastScratch, emContributionScratch, type ContrastScratch, type EmContribution } from './expectation';
import { inferenceScratch, type InferenceScratch } from './inference';
import { MAX_VALUE_COUNT } from './layout';
import { posteriorScratch } from './task-types';

/**
 * The typed arrays one engine (createEngine) computes in. They are reused from call to call so
 * that the API's hot path allocates little, and they are sound to reuse because each array is
 * filled before it is read within one synchronous call and never handed to a caller (results are
 * copied out or freshly allocated). One set per engine, and one engine per process or consumer,
 * so nothing here is shared between engines.
 */
export interface Scratch {
  inference: InferenceScratch;
  contrast: ContrastScratch;
  /** observe's part of the user in the population's EM. */
  em: EmContribution;
  /** decide's weight P̃^κ of each value of one dimension. */
  choiceWeights: Float64Array;
}

export function createScratch(): Scratch {
  return {
    inference: inferenceScratch(posteriorScratch()),
    contrast: contrastScratch(),
    em: emContributionScratch(),
    choiceWeights: new Float64Array(MAX_VALUE_COUNT),
  };
}
