import { z } from 'zod';
import { DIMENSIONS, DIMENSION_NAMES, TASK_COMPLEXITY, type Choice, type Dimension, type Pins, type ProfilePhase } from '../arms';
import type { Learner, LearnerDecision, SelectionProbabilities } from '../learner';
import { standardNormal, type Random } from '../random';
import { buildRationale, type Evidence, type ValueEvidence } from '../rationale';
import {
  addOutcome,
  discounted,
  emptyExcursion,
  emptySlot,
  engineStateSchema,
  slotOf,
  totals,
  type EngineState,
  type EvidenceSlot,
} from './evidence';
import { CELL_COUNT, COMPLEXITY_COUNT, DIMENSION_OFFSET, cellIndex, choiceSlots, complexityIndex, valueCount, valueIndex } from './layout';
import { probabilityLargest } from './normal';
import {
  compilePopulation,
  emptyPopulation,
  mergePopulation,
  observePopulation,
  parsePopulation,
  type CompiledPrior,
  type PopulationPrior,
} from './population';
import { valuePosterior } from './posterior';
import { personalize } from './conformity';

/**
 * The learning engine (docs/adr/0007-learning-engine.md): per user and dimension, tempered
 * Thompson sampling over the hierarchical Gaussian posteriors of posterior.ts — conditioned on
 * task complexity and tracked task types, backing off to the user's context-free evidence and
 * to the tenant's population prior (scaled by the user's conformity, conformity.ts), with
 * evidence decaying per outcome and discounted when a change of preference is detected.
 * Pinned dimensions return the pin. The logged selection probability of a value is the
 * tempered sampler's exact chance of choosing it; `confidence` is the product over the
 * dimensions of the untempered posterior probability that the chosen value is the best — the
 * posterior probability that the combination is the user's best in this context.
 */

/** Phase rule: `established` once the user has this many outcomes… */
export const ESTABLISHED_MIN_OUTCOMES = 10;
/**
 * …and, at the complexity where the user has most evidence, the best of the framings the user
 * has recent evidence for is the best of them with this probability.
 */
export const ESTABLISHED_MIN_PROBABILITY = 0.8;

/**
 * Thompson draws use the posterior spread times this factor: a tempered sampler explores
 * less than plain Thompson sampling, which over-explores when values are many and evidence is
 * scarce (Chapelle & Li 2011). Tuned with bench:learning on its tuning seed.
 */
export const EXPLORATION_SCALE = 0.3;
/**
 * Change detection: a one-sided CUSUM of the standardised shortfall of each reward below the
 * chosen framing's predicted reward, S ← max(0, S − z − CHANGE_SLACK). When S passes
 * CHANGE_THRESHOLD the user's preferences have probably changed: their evidence from before
 * the current excursion of S above 0 is multiplied by CHANGE_DISCOUNT (on top of the steady
 * per-outcome decay), the excursion's outcomes — those that revealed the change — are kept at
 * full weight, and S restarts.
 */
export const CHANGE_SLACK = 0.5;
export const CHANGE_THRESHOLD = 4;
export const CHANGE_DISCOUNT = 0;
const MAX_VALUES = Math.max(...DIMENSION_NAMES.map(valueCount));
const means = new Float64Array(MAX_VALUES);
const sds = new Float64Array(MAX_VALUES);
const drawSds = new Float64Array(MAX_VALUES);
const out = new Float64Array(2);

/** Posterior means and standard deviations of one dimension's values, into `means`/`sds`. */
function dimensionPosteriors(state: EngineState, prior: CompiledPrior, dim: Dimension, complexity: number, taskSlot: number): number {
  const k = valueCount(dim);
  const first = DIMENSION_OFFSET[dim];
  for (let i = 0; i < k; i++) {
    valuePosterior(state, prior, complexity, taskSlot, first + i, out);
    means[i] = out[0]!;
    sds[i] = Math.sqrt(out[1]!);
  }
  return k;
}

function argmax(values: ArrayLike<number>, count: number): number {
  let best = 0;
  for (let i = 1; i < count; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

function computeSummary(state: EngineState, prior: CompiledPrior): EngineState['summary'] {
  // Weigh complexities by how much of the user's evidence they hold (uniform when none).
  const { n } = totals(state);
  const weight = new Float64Array(COMPLEXITY_COUNT);
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    for (let i = 0; i < valueCount('framing'); i++) weight[c]! += n[cellIndex(c, DIMENSION_OFFSET.framing + i)]!;
    weight[c]! += 0.1;
  }
  const best = DIMENSION_NAMES.map((dim) => {
    const scores = new Float64Array(valueCount(dim));
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      dimensionPosteriors(state, prior, dim, c, 0);
      for (let i = 0; i < scores.length; i++) scores[i]! += weight[c]! * means[i]!;
    }
    return argmax(scores, scores.length);
  }) as EngineState['summary']['best'];
  let phase: ProfilePhase = state.outcomes === 0 ? 'cold_start' : 'learning';
  if (state.outcomes >= ESTABLISHED_MIN_OUTCOMES) {
    // Judged among the framings this user has recent evidence for at their main complexity: a
    // user served one framing they like is established, whatever untried framings might do.
    const top = argmax(weight, COMPLEXITY_COUNT);
    const k = dimensionPosteriors(state, prior, 'framing', top, 0);
    let tried = 0;
    for (let i = 0; i < k; i++) {
      if (n[cellIndex(top, DIMENSION_OFFSET.framing + i)]! < 0.5) continue;
      means[tried] = means[i]!;
      sds[tried] = sds[i]!;
      tried++;
    }
    if (tried > 0 && probabilityLargest(argmax(means, tried), means, sds, tried) >= ESTABLISHED_MIN_PROBABILITY) phase = 'established';
  }
  return { best, phase };
}

/** The change detector's statistic after this outcome (before any reset). */
function nextShortfall(
  state: EngineState,
  prior: CompiledPrior,
  complexity: number,
  taskSlot: number,
  choice: Choice,
  reward: number,
): number {
  const index = valueIndex('framing', choice.framing);
  if (index < 0 || state.outcomes === 0) return state.shortfall;
  const slot = DIMENSION_OFFSET.framing + index;
  valuePosterior(state, prior, complexity, taskSlot, slot, out);
  const z = (reward - out[0]!) / Math.sqrt(out[1]! + prior.noise[cellIndex(complexity, slot)]!);
  return Number.isFinite(z) ? Math.max(0, state.shortfall - z - CHANGE_SLACK) : state.shortfall;
}

function toChoice(indices: readonly number[]): Choice {
  const choice = {} as Record<Dimension, string>;
  DIMENSION_NAMES.forEach((dim, d) => (choice[dim] = DIMENSIONS[dim].values[indices[d]!]!));
  return choice as Choice;
}

type Cells = { n: ArrayLike<number>; s: ArrayLike<number>; st: ArrayLike<number> };

/** Evidence summed over some cells of one set of arrays. */
function evidenceIn(cells: Cells, indices: readonly number[]): Evidence {
  let n = 0;
  let started = 0;
  let rewardSum = 0;
  for (const i of indices) {
    n += cells.n[i]!;
    started += cells.st[i]!;
    rewardSum += cells.s[i]!;
  }
  return { n, started, rewardSum };
}

function valueEvidence(
  state: EngineState,
  sums: Cells,
  prior: CompiledPrior,
  complexity: number,
  dim: Dimension,
  index: number,
  taskSlot: number,
  pinned: boolean,
  explored: boolean,
): ValueEvidence {
  const slot = DIMENSION_OFFSET[dim] + index;
  const cell = cellIndex(complexity, slot);
  const all = [cellIndex(0, slot), cellIndex(1, slot), cellIndex(2, slot)];
  const typed = state.slots[taskSlot]!;
  return {
    dimension: dim,
    value: DIMENSIONS[dim].values[index]!,
    taskType: taskSlot > 0 ? { name: typed.taskType!, evidence: evidenceIn(typed, all) } : null,
    inContext: evidenceIn(sums, [cell]),
    overall: evidenceIn(sums, all),
    population: { n: prior.support[cell]!, meanReward: prior.mean[cell]! },
    pinned,
    explored,
  };
}

/** Reads a state of the first learner (Beta cells per complexity) as untyped evidence. */
const legacyCells = z.array(z.tuple([z.number(), z.number(), z.number()]));
const legacyStateSchema = z.object({
  learner: z.literal('thompson-v1'),
  n: z.number().int().min(0),
  byComplexity: z.record(z.enum(TASK_COMPLEXITY), z.record(z.enum(DIMENSION_NAMES as [Dimension, ...Dimension[]]), legacyCells)),
});

function fromLegacy(raw: unknown): EngineState | null {
  const parsed = legacyStateSchema.safeParse(raw);
  if (!parsed.success) return null;
  const slot = emptySlot(null);
  TASK_COMPLEXITY.forEach((complexity, c) => {
    for (const dim of DIMENSION_NAMES) {
      parsed.data.byComplexity[complexity]?.[dim]?.forEach(([n, s, st], i) => {
        const cell = cellIndex(c, DIMENSION_OFFSET[dim] + i);
        if (i >= valueCount(dim) || cell >= CELL_COUNT) return;
        slot.n[cell] = n;
        slot.s[cell] = s;
        slot.st[cell] = st;
      });
    }
  });
  return stateOf(parsed.data.n, slot, emptyPopulation());
}

/** A state holding `evidence` from `outcomes` outcomes, with its summary under `prior`. */
function stateOf(outcomes: number, evidence: EvidenceSlot, prior: PopulationPrior): EngineState {
  const state: EngineState = {
    learner: 'engine-v1',
    outcomes,
    shortfall: 0,
    excursion: emptyExcursion(),
    slots: [evidence],
    summary: { best: [0, 0, 0, 0], phase: 'cold_start' },
  };
  return { ...state, summary: computeSummary(state, compilePopulation(prior)) };
}

export const engine: Learner<EngineState, PopulationPrior> = {
  name: 'engine-v1',

  initialState(prior) {
    return stateOf(0, emptySlot(null), prior);
  },

  parseState(raw) {
    const parsed = engineStateSchema.safeParse(raw);
    if (parsed.success) return parsed.data;
    return fromLegacy(raw) ?? this.initialState(emptyPopulation());
  },

  emptyPrior: emptyPopulation,
  parsePrior: parsePopulation,

  decide(state, context, pins: Pins, random: Random, population): LearnerDecision {
    const shared = compilePopulation(population);
    const sums = totals(state);
    const prior = personalize(state, shared, sums);
    const c = complexityIndex(context.complexity);
    const taskSlot = slotOf(state, context.taskType);
    const choice = {} as Record<Dimension, string>;
    const probabilities = {} as SelectionProbabilities;
    const explored: Dimension[] = [];
    const evidence: ValueEvidence[] = [];
    let confidence = 1;
    for (const dim of DIMENSION_NAMES) {
      const pinned = pins[dim];
      if (pinned !== undefined) {
        const index = valueIndex(dim, pinned);
        choice[dim] = pinned;
        probabilities[dim] = 1;
        evidence.push(valueEvidence(state, sums, shared, c, dim, index, taskSlot, true, false));
        continue;
      }
      const k = dimensionPosteriors(state, prior, dim, c, taskSlot);
      let chosen = 0;
      let bestDraw = -Infinity;
      for (let i = 0; i < k; i++) {
        drawSds[i] = EXPLORATION_SCALE * sds[i]!;
        const draw = means[i]! + drawSds[i]! * standardNormal(random);
        if (draw > bestDraw) {
          bestDraw = draw;
          chosen = i;
        }
      }
      const isExplored = chosen !== argmax(means, k);
      choice[dim] = DIMENSIONS[dim].values[chosen]!;
      probabilities[dim] = probabilityLargest(chosen, means, drawSds, k);
      confidence *= probabilityLargest(chosen, means, sds, k);
      if (isExplored) explored.push(dim);
      evidence.push(valueEvidence(state, sums, shared, c, dim, chosen, taskSlot, false, isExplored));
    }
    return {
      choice: choice as Choice,
      probabilities,
      explored,
      confidence: Math.min(1, Math.max(0, confidence)),
      rationale: buildRationale(evidence, context.complexity, state.outcomes),
    };
  },

  update(state, context, choice, reward, started, population) {
    const shared = compilePopulation(population);
    const c = complexityIndex(context.complexity);
    const taskSlot = slotOf(state, context.taskType);
    const prior = personalize(state, shared, totals(state));
    const shortfall = nextShortfall(state, prior, c, taskSlot, choice, reward);
    const changed = shortfall > CHANGE_THRESHOLD;
    const base = changed ? discounted(state, CHANGE_DISCOUNT) : state;
    const added = addOutcome({ ...base, shortfall: changed ? 0 : shortfall }, c, context.taskType, choice, reward, started);
    // The excursion holds the outcomes since the detector last stood at 0.
    const next = added.shortfall > 0 ? added : { ...added, excursion: emptyExcursion() };
    return { ...next, summary: computeSummary(next, personalize(next, shared, totals(next))) };
  },

  observe(delta, prior, state, context, choice, probabilities, reward) {
    observePopulation(delta, prior, totals(state), complexityIndex(context.complexity), choiceSlots(choice), probabilities, reward);
  },

  mergePrior: mergePopulation,

  summarize(state) {
    return { best: toChoice(state.summary.best), phase: state.summary.phase, interactionCount: state.outcomes };
  },

  populationBest(population, context) {
    const prior = compilePopulation(population);
    const c = complexityIndex(context.complexity);
    return toChoice(
      DIMENSION_NAMES.map((dim) => {
        const first = DIMENSION_OFFSET[dim];
        const k = valueCount(dim);
        for (let i = 0; i < k; i++) means[i] = prior.mean[cellIndex(c, first + i)]!;
        return argmax(means, k);
      }),
    );
  },
};
