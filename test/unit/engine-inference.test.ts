import { DIMENSIONS, DIMENSION_NAMES, FRAMINGS, type Choice } from '../../shared/domain/arms';
import { createEngine } from '../../shared/domain/engine/engine';
import { favouritePosterior } from '../../shared/domain/engine/favourite';
import { createScratch } from '../../shared/domain/engine/scratch';
import { CONTEXT_CELL_COUNT, DIMENSION_OFFSET, cellIndex } from '../../shared/domain/engine/layout';
import { emptyPopulation } from '../../shared/domain/engine/population';
import { compilePopulation, type CompiledPopulation } from '../../shared/domain/engine/population-model';
import { DECAY, type EngineState } from '../../shared/domain/engine/state';
import type { DecisionContext } from '../../shared/domain/learner';
import { inferenceOf } from '../support/engine';

const engine = createEngine();
const scratch = createScratch();
const MEDIUM: DecisionContext = { taskComplexity: 'medium' };
const styleCell = (style: Choice['style']) => cellIndex(1, DIMENSION_OFFSET.style + DIMENSIONS.style.values.indexOf(style));
const framingCell = (framing: Choice['framing']) => cellIndex(1, DIMENSION_OFFSET.framing + FRAMINGS.indexOf(framing));

/** A tenant whose data showed that a user's favourite framing adds 0.6 to the reward and a favourite style 0.1. */
function learnedLevels(): CompiledPopulation {
  const prior = emptyPopulation();
  const levels = [
    [0.8, 0.2],
    [0.55, 0.45],
    [0.55, 0.45],
    [0.55, 0.45],
  ];
  levels.forEach(([favourite, other], d) => {
    prior.favouriteLevelSum[d] = 1000 * favourite!;
    prior.favouriteLevelWeight[d] = 1000;
    prior.otherLevelSum[d] = 1000 * other!;
    prior.otherLevelWeight[d] = 1000;
    prior.creditedSum[d] = 1000;
    prior.creditedSquares[d] = 2000 * 0.3;
    prior.creditedCount[d] = 2000;
  });
  return compilePopulation(prior);
}

/** Ten failures with micro_steps framing in a direct style, then ten successes with curiosity in a warm style. */
function confounded(prior: CompiledPopulation): EngineState {
  let state = engine.initialState(prior);
  const c = (framing: Choice['framing'], style: Choice['style']): Choice => ({
    framing,
    style,
    complexityHandling: 'chunked',
    encouragement: 'moderate',
  });
  for (let i = 0; i < 10; i++)
    state = engine.update(state, { context: MEDIUM, choice: c('micro_steps', 'direct'), reward: 0.1, started: false }, prior);
  for (let i = 0; i < 10; i++)
    state = engine.update(state, { context: MEDIUM, choice: c('curiosity', 'warm'), reward: 0.9, started: true }, prior);
  return state;
}

describe('inferUser', () => {
  it('credits a run of good outcomes to the framing that changed, not to the style shown alongside', () => {
    const prior = learnedLevels();
    const compiled = prior;
    const state = confounded(prior);
    const inference = inferenceOf(state, compiled);
    expect(inference.favourite[framingCell('curiosity')]).toBeGreaterThan(0.95);
    const credited = inference.favourite[styleCell('warm')]! - inference.favourite[styleCell('direct')]!;
    // Fed the raw rewards instead, the style's model would all but settle on warm.
    const raw = { n: new Float64Array(CONTEXT_CELL_COUNT), s: new Float64Array(CONTEXT_CELL_COUNT) };
    const { history } = state;
    history.reward.forEach((reward, i) => {
      const weight = DECAY ** (history.reward.length - 1 - i);
      const cell = cellIndex(history.taskComplexity[i]!, DIMENSION_OFFSET.style + history.shown.style[i]!);
      raw.n[cell]! += weight;
      raw.s[cell]! += weight * reward;
    });
    const naive = new Float64Array(CONTEXT_CELL_COUNT);
    favouritePosterior(compiled.dimensions[1]!, { n: raw.n, s: raw.s, contexts: 3 }, naive, scratch.inference.posterior.favourite);
    expect(naive[styleCell('warm')]! - naive[styleCell('direct')]!).toBeGreaterThan(0.6);
    expect(credited).toBeLessThan(0.3);
  });

  it('depends on the state’s content, not on the object: a copy gets the same beliefs', () => {
    const prior = learnedLevels();
    const state = confounded(prior);
    expect(inferenceOf({ ...state }, prior).favourite).toEqual(inferenceOf(state, prior).favourite);
  });

  it('without history is the population prior', () => {
    const compiled = learnedLevels();
    const fresh = engine.initialState(compiled);
    const inference = inferenceOf(fresh, compiled);
    const expected = new Float64Array(CONTEXT_CELL_COUNT);
    DIMENSION_NAMES.forEach((_, d) =>
      favouritePosterior(
        compiled.dimensions[d]!,
        { n: new Float64Array(CONTEXT_CELL_COUNT), s: new Float64Array(CONTEXT_CELL_COUNT), contexts: 3 },
        expected,
        scratch.inference.posterior.favourite,
      ),
    );
    expect(Array.from(inference.favourite)).toEqual(Array.from(expected));
  });
});
