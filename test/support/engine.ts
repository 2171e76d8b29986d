import { inferUser, priorBeliefs, type Inference } from '../../shared/domain/engine/inference';
import { COMPLEXITY_COUNT } from '../../shared/domain/engine/layout';
import type { CompiledPopulation } from '../../shared/domain/engine/population-model';
import { createScratch, type Scratch } from '../../shared/domain/engine/scratch';
import type { EngineState } from '../../shared/domain/engine/state';

/** A user's inference as an engine makes it (engine.ts's `infer`), for tests of the engine's inner steps. */
export function inferenceOf(state: EngineState, prior: CompiledPopulation, scratch: Scratch = createScratch()): Inference {
  const start = priorBeliefs(prior, COMPLEXITY_COUNT * (1 + state.taskTypes.length), scratch.inference.posterior);
  return inferUser(state, prior, start, scratch.inference);
}
