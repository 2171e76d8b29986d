import { DIMENSION_NAMES, type Choice } from '../arms';
import { complexityOffset } from './complexity-shares';
import { contextEvidence, creditShares, type Inference } from './inference';
import { COMPLEXITY_COUNT, CONTEXT_CELL_COUNT, DIMENSION_OFFSET, VALUE_COUNT, choiceIndex, contextIndex, valueCount } from './layout';
import { historyLength, type EngineState } from './state';
import type { CompiledPopulation } from './population-model';

/**
 * What one outcome means to the model (docs/adr/0009-favourite-model.md): before it arrives,
 * the reward the user's beliefs predict and each dimension's credited share of the reward that
 * came (expectOutcome: the change detector's error and the population's inverse-propensity
 * sums); after it, the user's part in the population's EM estimates and within-user contrast
 * (emContribution).
 */

/** withinUserContrast's working arrays (one set per engine, scratch.ts): per context cell, the count, sum and sum of squares of credited rewards. */
export interface ContrastScratch {
  counts: Float64Array;
  sums: Float64Array;
  squares: Float64Array;
}

export const contrastScratch = (): ContrastScratch => ({
  counts: new Float64Array(CONTEXT_CELL_COUNT),
  sums: new Float64Array(CONTEXT_CELL_COUNT),
  squares: new Float64Array(CONTEXT_CELL_COUNT),
});

/**
 * Dimension d's within-user contrast over the user's history (one-way analysis of variance of
 * the credited rewards r by value shown, per context x): with N outcomes in x, n_v of them
 * showing v with mean r̄_v, and k values shown,
 *
 *     B = Σ_v n_v (r̄_v − r̄)²,   W = Σ_v Σ_i (r_i − r̄_v)²,   E[B − (k − 1) · W / (N − k)] = Δ² · Σ_v P(f = v) · n_v (N − n_v) / N
 *
 * for a favourite f that adds Δ and noise of any variance. Adds the left side (excess) and
 * Σ_v P(f = v) · n_v (N − n_v) / N (scale) to `part`; the population's step estimate is their ratio.
 */
function withinUserContrast(
  state: EngineState,
  now: Inference,
  d: number,
  part: { contrastExcess: Float64Array; contrastScale: Float64Array },
  { counts, sums, squares }: ContrastScratch,
): void {
  const dim = DIMENSION_NAMES[d]!;
  const offset = DIMENSION_OFFSET[dim];
  const k = valueCount(dim);
  const values = VALUE_COUNT;
  const dims = D;
  for (let x = 0; x < now.contexts; x++) {
    for (let cell = x * values + offset; cell < x * values + offset + k; cell++) {
      counts[cell] = 0;
      sums[cell] = 0;
      squares[cell] = 0;
    }
  }
  const { history } = state;
  const { taskComplexity, taskSlot } = history;
  const shown = history.shown[dim];
  const { credited } = now;
  const length = historyLength(history);
  for (let e = 0; e < length; e++) {
    const cell = contextIndex(taskComplexity[e]!, taskSlot[e]!) * values + offset + shown[e]!;
    if (cell >= CONTEXT_CELL_COUNT) continue; // without a complexity: in no context of its own
    const r = credited[e * dims + d]!;
    counts[cell]! += 1;
    sums[cell]! += r;
    squares[cell]! += r * r;
  }
  for (let x = 0; x < now.contexts; x++) {
    let total = 0;
    let sum = 0;
    let between = 0;
    let within = 0;
    let shown = 0;
    for (let v = 0; v < k; v++) {
      const cell = x * VALUE_COUNT + offset + v;
      const n = counts[cell]!;
      if (n === 0) continue;
      total += n;
      sum += sums[cell]!;
      between += (sums[cell]! * sums[cell]!) / n;
      within += squares[cell]! - (sums[cell]! * sums[cell]!) / n;
      shown++;
    }
    if (shown < 2 || total <= shown) continue;
    part.contrastExcess[d]! += between - (sum * sum) / total - ((shown - 1) * within) / (total - shown);
    for (let v = 0; v < k; v++) {
      const cell = x * VALUE_COUNT + offset + v;
      part.contrastScale[d]! += (now.favourite[cell]! * counts[cell]! * (total - counts[cell]!)) / total;
    }
  }
}

/** A user's part in the population's EM estimates grows with their evidence n as n / (n + USER_WEIGHT_HALF). */
const USER_WEIGHT_HALF = 2;

const D = DIMENSION_NAMES.length;

/** What the engine expected of an outcome before it arrived. */
export interface Expectation {
  /** The context cell of each dimension's value shown. */
  cells: Int32Array;
  /** The whole reward predicted. */
  predicted: number;
  /** Each dimension's credited share of the reward that came (creditShares). */
  credited: Float64Array;
}

/**
 * What `inference` expects of an outcome of `choice` in context (complexity c, UNKNOWN_COMPLEXITY
 * included, and task slot), and each dimension's credit for `reward`. With no favourite shown,
 * a whole reward is at any dimension's non-favourite level (a dimension's credited reward is the
 * whole reward less the others' parts); the framing's (d = 0) is used, its EM split being the clearest.
 */
export function expectOutcome({
  prior,
  inference,
  choice,
  c,
  slot,
  reward,
}: {
  prior: CompiledPopulation;
  inference: Inference;
  choice: Choice;
  c: number;
  slot: number;
  reward: number;
}): Expectation {
  const context = contextIndex(c, slot);
  const cells = new Int32Array(D);
  DIMENSION_NAMES.forEach((dim, d) => (cells[d] = context * VALUE_COUNT + DIMENSION_OFFSET[dim] + choiceIndex(dim, choice[dim])));
  const credited = new Float64Array(D);
  const offset = complexityOffset(prior, c, inference.shares);
  const predicted =
    prior.baseLevel[0]! + offset + creditShares({ prior, favourite: inference.beliefs, cells, at: 0, reward, out: credited, outAt: 0 });
  return { cells, predicted, credited };
}

/** A user's part in the population's EM after one outcome, per dimension (emContribution). */
export interface EmContribution {
  userWeight: Float64Array;
  follower: Float64Array;
  favS: Float64Array;
  favN: Float64Array;
  otherS: Float64Array;
  otherN: Float64Array;
  contrastExcess: Float64Array;
  contrastScale: Float64Array;
  typedWeight: number;
  neutralLogBayes: number;
}

/** Where emContribution writes (one per engine, scratch.ts): a worker observes every outcome, so its part is not allocated anew each time. */
export const emContributionScratch = (): EmContribution => ({
  userWeight: new Float64Array(D),
  follower: new Float64Array(D),
  favS: new Float64Array(D),
  favN: new Float64Array(D),
  otherS: new Float64Array(D),
  otherN: new Float64Array(D),
  contrastExcess: new Float64Array(D),
  contrastScale: new Float64Array(D),
  typedWeight: 0,
  neutralLogBayes: 0,
});

/**
 * A user's part in the population's EM after an outcome, per dimension, from their beliefs
 * `now` over all their evidence: P(follower) with the user's weight n / (n + USER_WEIGHT_HALF),
 * and one outcome's worth of the split of their evidence between favourite and other levels
 * (Σ P(favourite) · credited reward and Σ P(favourite) · outcomes, and the same for the rest);
 * and, for the tenant's task-type-neutral share, the weight of the user's typed evidence (as a
 * user's weight) and their log Bayes factor for neutral. Written into `part` (every field) and
 * returned; `scratch` is only worked in.
 */
export function emContribution(
  state: EngineState,
  now: Inference,
  prior: CompiledPopulation,
  scratch: ContrastScratch,
  part: EmContribution,
): EmContribution {
  part.contrastExcess.fill(0);
  part.contrastScale.fill(0);
  part.neutralLogBayes = now.neutralLogBayes;
  const { n: weights, s: sums, favourite, contexts } = now;
  const { offsets } = prior;
  const values = VALUE_COUNT;
  const complexities = COMPLEXITY_COUNT;
  DIMENSION_NAMES.forEach((dim, d) => {
    const offset = DIMENSION_OFFSET[dim];
    const k = valueCount(dim);
    let evidence = 0;
    let favS = 0;
    let favN = 0;
    let otherS = 0;
    let otherN = 0;
    for (let x = 0, c = 0; x < contexts; x++, c = c + 1 === complexities ? 0 : c + 1) {
      const offsetHere = offsets[c]!;
      for (let v = 0; v < k; v++) {
        const cell = x * values + offset + v;
        const n = weights[cell]!;
        const s = sums[cell]! - n * offsetHere;
        const p = favourite[cell]!;
        favS += p * s;
        favN += p * n;
        otherS += (1 - p) * s;
        otherN += (1 - p) * n;
        evidence += n;
      }
    }
    part.favS[d] = favS;
    part.favN[d] = favN;
    part.otherS[d] = otherS;
    part.otherN[d] = otherN;
    const scale = 1 / Math.max(1, evidence);
    part.favS[d]! *= scale;
    part.favN[d]! *= scale;
    part.otherS[d]! *= scale;
    part.otherN[d]! *= scale;
    withinUserContrast(state, now, d, part, scratch);
    part.contrastExcess[d]! *= scale;
    part.contrastScale[d]! *= scale;
    part.userWeight[d] = evidence / (evidence + USER_WEIGHT_HALF);
    part.follower[d] = now.follower[d]!;
  });
  let typed = 0;
  for (let x = COMPLEXITY_COUNT; x < now.contexts; x++) typed += contextEvidence(now, x);
  part.typedWeight = typed / (typed + USER_WEIGHT_HALF);
  return part;
}
