import { DIMENSIONS, DIMENSION_NAMES } from '../arms';
import type { Evidence, ValueEvidence } from '../rationale';
import type { CompiledPopulation } from './population-model';
import { COMPLEXITY_COUNT, DIMENSION_OFFSET, UNKNOWN_COMPLEXITY, cellIndex } from './layout';
import { DECAY, historyLength, type EngineState } from './state';

/** What the rationale quotes of a user's evidence for a value (shared/domain/rationale.ts): raw, decayed counts, not the model's beliefs. */

const noEvidence = (): Evidence => ({ n: 0, started: 0, rewardSum: 0 });

function addTo(evidence: Evidence, weight: number, started: number, reward: number): void {
  evidence.n += weight;
  evidence.started += weight * started;
  evidence.rewardSum += weight * reward;
}

function addOlder(evidence: Evidence, state: EngineState, cell: number): void {
  evidence.n += state.older.weight[cell]!;
  evidence.started += state.older.startedSum[cell]!;
  evidence.rewardSum += state.older.rewardSum[cell]!;
}

/**
 * This user's decayed raw evidence (outcomes, started, reward) for value `index` of dimension d,
 * in one pass over the history: at complexity c (with older outcomes; for a request without
 * complexity, all of it), at any complexity (with older outcomes), and in task-type slot `slot`
 * at any complexity (history only; null when the request has no tracked task type). The
 * population's is at c, or at all complexities together for a request without one.
 */
export function valueEvidence({
  state,
  prior,
  c,
  d,
  index,
  slot,
  pinned,
  explored,
}: {
  state: EngineState;
  prior: CompiledPopulation;
  /** The request's complexity index (UNKNOWN_COMPLEXITY included) and task-type slot. */
  c: number;
  slot: number;
  /** The dimension and the value's index in it. */
  d: number;
  index: number;
  pinned: boolean;
  explored: boolean;
}): ValueEvidence {
  const dim = DIMENSION_NAMES[d]!;
  const valueSlot = DIMENSION_OFFSET[dim] + index;
  const known = c !== UNKNOWN_COMPLEXITY;
  const inContext = noEvidence();
  const overall = noEvidence();
  const typed = noEvidence();
  for (let complexity = 0; complexity < COMPLEXITY_COUNT; complexity++) addOlder(overall, state, cellIndex(complexity, valueSlot));
  if (known) addOlder(inContext, state, cellIndex(c, valueSlot));
  const { history } = state;
  const shown = history.shown[dim];
  let weight = 1;
  for (let e = historyLength(history) - 1; e >= 0; e--, weight *= DECAY) {
    if (shown[e] !== index) continue;
    const started = history.started[e] ? 1 : 0;
    const reward = history.reward[e]!;
    addTo(overall, weight, started, reward);
    if (history.taskComplexity[e] === c) addTo(inContext, weight, started, reward);
    if (slot > 0 && history.taskSlot[e] === slot) addTo(typed, weight, started, reward);
  }
  return {
    dimension: dim,
    value: DIMENSIONS[dim].values[index]!,
    taskType: slot > 0 ? { name: state.taskTypes[slot - 1]!, evidence: typed } : null,
    inContext: known ? inContext : overall,
    overall,
    population: populationEvidence(prior, c, valueSlot),
    pinned,
    explored,
  };
}

/** The population's outcomes with a value and their mean reward at complexity c (at all complexities for UNKNOWN_COMPLEXITY), and its outcomes there with any value. */
function populationEvidence(prior: CompiledPopulation, c: number, valueSlot: number): ValueEvidence['population'] {
  if (c !== UNKNOWN_COMPLEXITY) {
    const here = cellIndex(c, valueSlot);
    return { n: prior.support[here]!, meanReward: prior.rawMean[here]!, total: prior.outcomes[c]! };
  }
  let n = 0;
  let rewardSum = 0;
  let total = 0;
  for (let complexity = 0; complexity < COMPLEXITY_COUNT; complexity++) {
    const cell = cellIndex(complexity, valueSlot);
    n += prior.support[cell]!;
    rewardSum += prior.support[cell]! * prior.rawMean[cell]!;
    total += prior.outcomes[complexity]!;
  }
  return { n, meanReward: n > 0 ? rewardSum / n : 0, total };
}
