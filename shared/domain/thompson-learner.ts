import { z } from 'zod';
import { DIMENSIONS, DIMENSION_NAMES, type Choice, type Dimension, type Pins, type TaskComplexity } from './arms';
import type { DecisionContext, Learner, LearnerDecision, ProfileSummary, SelectionProbabilities } from './learner';
import { probabilityBest, type BetaParams } from './probability-best';
import { sampleBeta, type Random } from './random';
import { buildRationale, type ValueEvidence } from './rationale';

/**
 * Per-user Thompson sampling over each dimension's values, conditioned on task complexity.
 * Each (context, dimension, value) cell keeps [count, rewardSum, startedCount]; the context
 * cell's Beta posterior borrows up to BACKOFF_WEIGHT pseudo-observations from the user's
 * evidence in other contexts, so a new context starts from what the user showed elsewhere.
 */
const cellSchema = z.tuple([z.number(), z.number(), z.number()]);
/** One cell per value of the dimension: a state from another value set is not this learner's. */
const cellsOf = (dim: Dimension) => z.array(cellSchema).length(DIMENSIONS[dim].values.length);
const contextCellsSchema = z.object({
  framing: cellsOf('framing'),
  style: cellsOf('style'),
  complexity: cellsOf('complexity'),
  encouragement: cellsOf('encouragement'),
});
export const thompsonStateSchema = z.object({
  learner: z.literal('thompson-v1'),
  n: z.number().int().min(0),
  all: contextCellsSchema,
  byComplexity: z.object({ low: contextCellsSchema, medium: contextCellsSchema, high: contextCellsSchema }),
});
export type ThompsonState = z.infer<typeof thompsonStateSchema>;
type ContextCells = z.infer<typeof contextCellsSchema>;
export type Cell = z.infer<typeof cellSchema>;

const PRIOR_ALPHA = 1;
const PRIOR_BETA = 1;
const BACKOFF_WEIGHT = 3;
/** Phase rule: established after this many outcomes when the best framing is clear. */
export const ESTABLISHED_MIN_OUTCOMES = 15;
export const ESTABLISHED_MIN_PROBABILITY = 0.7;

function emptyCells(): ContextCells {
  const cells = {} as ContextCells;
  for (const dim of DIMENSION_NAMES) cells[dim] = DIMENSIONS[dim].values.map((): Cell => [0, 0, 0]);
  return cells;
}

function posterior(cell: Cell, all: Cell): BetaParams {
  const [n, s] = cell;
  const otherN = all[0] - n;
  const otherS = all[1] - s;
  const borrowed = Math.min(otherN, BACKOFF_WEIGHT);
  const otherMean = otherN > 0 ? otherS / otherN : 0.5;
  return {
    alpha: PRIOR_ALPHA + s + borrowed * otherMean,
    beta: PRIOR_BETA + (n - s) + borrowed * (1 - otherMean),
  };
}

function contextPosteriors(state: ThompsonState, complexity: TaskComplexity, dim: Dimension): BetaParams[] {
  const cells = state.byComplexity[complexity][dim];
  return cells.map((cell, i) => posterior(cell, state.all[dim][i]!));
}

function argmax(values: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

function evidenceFor(state: ThompsonState, context: DecisionContext, choice: Choice, pins: Pins, explored: Dimension[]): ValueEvidence[] {
  return DIMENSION_NAMES.map((dim) => {
    const index = (DIMENSIONS[dim].values as readonly string[]).indexOf(choice[dim]);
    return {
      dimension: dim,
      value: choice[dim],
      inContext: state.byComplexity[context.complexity][dim][index]!,
      overall: state.all[dim][index]!,
      pinned: pins[dim] !== undefined,
      explored: explored.includes(dim),
    };
  });
}

const mean = ({ alpha, beta }: BetaParams) => alpha / (alpha + beta);

export const thompsonLearner: Learner<ThompsonState> = {
  name: 'thompson-v1',

  initialState(): ThompsonState {
    return {
      learner: 'thompson-v1',
      n: 0,
      all: emptyCells(),
      byComplexity: { low: emptyCells(), medium: emptyCells(), high: emptyCells() },
    };
  },

  parseState(raw: unknown): ThompsonState {
    const parsed = thompsonStateSchema.safeParse(raw);
    return parsed.success ? parsed.data : this.initialState();
  },

  decide(state, context: DecisionContext, pins: Pins, random: Random): LearnerDecision {
    const choice = {} as Record<Dimension, string>;
    const probabilities = {} as SelectionProbabilities;
    const explored: Dimension[] = [];
    let confidence = 1;
    for (const dim of DIMENSION_NAMES) {
      const values = DIMENSIONS[dim].values;
      const pinned = pins[dim];
      if (pinned !== undefined) {
        choice[dim] = pinned;
        probabilities[dim] = 1;
        continue;
      }
      const params = contextPosteriors(state, context.complexity, dim);
      const draws = params.map(({ alpha, beta }) => sampleBeta(alpha, beta, random));
      const chosen = argmax(draws);
      const pBest = probabilityBest(params);
      choice[dim] = values[chosen]!;
      // Under Thompson sampling the chance of selecting a value equals its posterior
      // probability of being best.
      probabilities[dim] = pBest[chosen]!;
      confidence *= pBest[chosen]!;
      if (chosen !== argmax(params.map(mean))) explored.push(dim);
    }
    const decided = choice as Choice;
    return {
      choice: decided,
      probabilities,
      explored,
      confidence: Math.min(1, Math.max(0, confidence)),
      rationale: buildRationale(evidenceFor(state, context, decided, pins, explored), context.complexity, state.n),
    };
  },

  update(state, context, choice, reward, started): ThompsonState {
    const next = structuredClone(state);
    next.n += 1;
    for (const dim of DIMENSION_NAMES) {
      const index = (DIMENSIONS[dim].values as readonly string[]).indexOf(choice[dim]);
      if (index < 0) continue;
      for (const cells of [next.all[dim], next.byComplexity[context.complexity][dim]]) {
        const cell = cells[index]!;
        cell[0] += 1;
        cell[1] += reward;
        cell[2] += started ? 1 : 0;
      }
    }
    return next;
  },

  summarize(state): ProfileSummary {
    const best = {} as Record<Dimension, string>;
    let framingProbability = 0;
    for (const dim of DIMENSION_NAMES) {
      const params = state.all[dim].map((cell) => posterior(cell, cell));
      const top = argmax(params.map(mean));
      best[dim] = DIMENSIONS[dim].values[top]!;
      // Only the phase rule needs it, and only once enough outcomes are in.
      if (dim === 'framing' && state.n >= ESTABLISHED_MIN_OUTCOMES) framingProbability = probabilityBest(params)[top]!;
    }
    const phase =
      state.n === 0
        ? 'cold_start'
        : state.n >= ESTABLISHED_MIN_OUTCOMES && framingProbability >= ESTABLISHED_MIN_PROBABILITY
          ? 'established'
          : 'learning';
    return { best: best as Choice, phase, interactionCount: state.n };
  },
};
