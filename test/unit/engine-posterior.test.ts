import { FRAMINGS, TASK_COMPLEXITY, type Choice } from '../../shared/domain/arms';
import { engine } from '../../shared/domain/engine/engine';
import { addOutcome, slotOf, type EngineState } from '../../shared/domain/engine/evidence';
import { CELL_COUNT, COMPLEXITY_COUNT, DIMENSION_OFFSET, cellIndex } from '../../shared/domain/engine/layout';
import { PRIOR_CAP, compilePopulation, emptyPopulation, type CompiledPrior } from '../../shared/domain/engine/population';
import { valuePosterior } from '../../shared/domain/engine/posterior';
import { seededRandom } from '../../shared/domain/random';

/**
 * valuePosterior against hand-derived Gaussian updates. The model for one value a:
 *   reward = μ(c) + δ + ε_c + η_t + noise,  δ ~ N(0, userVar), ε_c ~ N(0, contextVar_c + meanVar_c),
 *   η_t ~ N(0, userVar + contextVar), noise ~ N(0, σ²),
 * where userVar, the η variance and σ² are those of the target cell.
 */
const MEDIUM = 1;
const PURPOSE = DIMENSION_OFFSET.framing + FRAMINGS.indexOf('purpose');
const CHALLENGE = DIMENSION_OFFSET.framing + FRAMINGS.indexOf('challenge');

const choice = (framing: Choice['framing']): Choice => ({ framing, style: 'warm', complexity: 'chunked', encouragement: 'moderate' });
const fresh = (): EngineState => engine.initialState(emptyPopulation());

function outcomes(state: EngineState, items: Array<[complexity: number, framing: Choice['framing'], reward: number, taskType?: string]>) {
  return items.reduce((s, [c, framing, reward, taskType]) => addOutcome(s, c, taskType, choice(framing), reward, reward > 0.5), state);
}

function posterior(state: EngineState, prior: CompiledPrior, complexity: number, taskSlot: number, slot: number) {
  const out = new Float64Array(2);
  valuePosterior(state, prior, complexity, taskSlot, slot, out);
  return { mean: out[0]!, variance: out[1]! };
}

/** A compiled prior whose per-cell numbers all differ, so using the wrong cell's number shows. */
function handPrior(userVar = (c: number, slot: number) => 0.01 + 0.003 * c + 0.0005 * slot): CompiledPrior {
  const prior: CompiledPrior = {
    mean: new Float64Array(CELL_COUNT),
    meanVar: new Float64Array(CELL_COUNT),
    support: new Float64Array(CELL_COUNT),
    noise: new Float64Array(CELL_COUNT),
    userVar: new Float64Array(CELL_COUNT),
    contextVar: new Float64Array(CELL_COUNT),
  };
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    for (let slot = 0; slot < CELL_COUNT / COMPLEXITY_COUNT; slot++) {
      const cell = cellIndex(c, slot);
      prior.mean[cell] = 0.3 + 0.1 * c + 0.02 * slot;
      prior.meanVar[cell] = 0.002 * (c + 1);
      prior.support[cell] = 10;
      prior.noise[cell] = 0.06; // one noise per dimension, as compilePopulation produces
      prior.userVar[cell] = userVar(c, slot);
      prior.contextVar[cell] = 0.02 + 0.01 * c;
    }
  }
  return prior;
}

/** Solves A·x = b for a small dense symmetric positive-definite A (Gaussian elimination). */
function solve(a: number[][], b: number[]): number[] {
  const m = b.length;
  const A = a.map((row, i) => [...row, b[i]!]);
  for (let col = 0; col < m; col++) {
    for (let row = col + 1; row < m; row++) {
      const f = A[row]![col]! / A[col]![col]!;
      for (let k = col; k <= m; k++) A[row]![k]! -= f * A[col]![k]!;
    }
  }
  const x = new Array<number>(m).fill(0);
  for (let row = m - 1; row >= 0; row--) {
    let s = A[row]![m]!;
    for (let k = row + 1; k < m; k++) s -= A[row]![k]! * x[k]!;
    x[row] = s / A[row]![row]!;
  }
  return x;
}

/**
 * Reference posterior in covariance form (no precision matrix, no Cholesky): each cell with
 * evidence is one observation ȳ = s/n of δ + ε_c (+ η_t) with noise σ²/n; the target
 * x* = δ + ε_complexity (+ η_taskSlot) is conditioned on all of them.
 */
function referencePosterior(state: EngineState, prior: CompiledPrior, complexity: number, taskSlot: number, slot: number) {
  const here = cellIndex(complexity, slot);
  const p = 1 + COMPLEXITY_COUNT + (state.slots.length - 1);
  const priorVar = new Array<number>(p).fill(0);
  priorVar[0] = prior.userVar[here]!;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) priorVar[1 + c] = prior.contextVar[cellIndex(c, slot)]! + prior.meanVar[cellIndex(c, slot)]!;
  for (let t = 1; t < state.slots.length; t++) priorVar[COMPLEXITY_COUNT + t] = prior.userVar[here]! + prior.contextVar[here]!;
  const rows: number[][] = [];
  const y: number[] = [];
  const noise: number[] = [];
  state.slots.forEach((evidence, t) => {
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      const cell = cellIndex(c, slot);
      const n = evidence.n[cell]!;
      if (n <= 0) continue;
      const row = new Array<number>(p).fill(0);
      row[0] = 1;
      row[1 + c] = 1;
      if (t > 0) row[COMPLEXITY_COUNT + t] = 1;
      rows.push(row);
      y.push(evidence.s[cell]! / n - prior.mean[cell]!);
      noise.push(prior.noise[here]! / n);
    }
  });
  const x = new Array<number>(p).fill(0);
  x[0] = 1;
  x[1 + complexity] = 1;
  if (taskSlot > 0) x[COMPLEXITY_COUNT + taskSlot] = 1;
  const priorTargetVar = x.reduce((s, xi, i) => s + xi * xi * priorVar[i]!, 0);
  if (rows.length === 0) return { mean: prior.mean[here]!, variance: priorTargetVar };
  const cov = rows.map((row) => row.reduce((s, r, i) => s + r * priorVar[i]! * x[i]!, 0)); // Cov(ȳ_k, x*)
  const gram = rows.map((ri, i) =>
    rows.map((rj, j) => ri.reduce((s, r, k) => s + r * priorVar[k]! * rj[k]!, 0) + (i === j ? noise[i]! : 0)),
  );
  const weights = solve(gram, cov);
  return {
    mean: prior.mean[here]! + weights.reduce((s, w, i) => s + w * y[i]!, 0),
    variance: priorTargetVar - weights.reduce((s, w, i) => s + w * cov[i]!, 0),
  };
}

describe('valuePosterior', () => {
  const empty = compilePopulation(emptyPopulation());

  it('is the prior when the user has no evidence', () => {
    for (const prior of [empty, handPrior()]) {
      for (let c = 0; c < COMPLEXITY_COUNT; c++) {
        for (const slot of [PURPOSE, CHALLENGE, DIMENSION_OFFSET.encouragement]) {
          const cell = cellIndex(c, slot);
          const { mean, variance } = posterior(fresh(), prior, c, 0, slot);
          expect(mean).toBeCloseTo(prior.mean[cell]!, 12);
          expect(variance).toBeCloseTo(prior.userVar[cell]! + prior.contextVar[cell]! + prior.meanVar[cell]!, 12);
        }
      }
    }
  });

  it('with evidence in the target cell only, is the conjugate Gaussian update (to 1e-9)', () => {
    const state = outcomes(fresh(), [
      [MEDIUM, 'purpose', 0.9],
      [MEDIUM, 'purpose', 0.7],
      [MEDIUM, 'purpose', 0.8],
    ]);
    const cell = cellIndex(MEDIUM, PURPOSE);
    const n = state.slots[0]!.n[cell]!;
    const s = state.slots[0]!.s[cell]!;
    expect(n).toBeCloseTo(1 + 0.97 + 0.97 * 0.97, 3); // decayed counts
    for (const prior of [empty, handPrior()]) {
      const v0 = prior.userVar[cell]! + prior.contextVar[cell]! + prior.meanVar[cell]!;
      const noise = prior.noise[cell]!;
      const mu = prior.mean[cell]!;
      const precision = 1 / v0 + n / noise;
      const expectedMean = mu + (s - n * mu) / noise / precision;
      const { mean, variance } = posterior(state, prior, MEDIUM, 0, PURPOSE);
      expect(Math.abs(variance - 1 / precision)).toBeLessThan(1e-9);
      expect(Math.abs(mean - expectedMean)).toBeLessThan(1e-9);
      expect(mean).toBeGreaterThan(mu); // rewards above the prior mean pull it up
    }
  });

  it('backs off: evidence at another complexity moves the target through δ, by less (shrinkage)', () => {
    const low = 0;
    const high = 2;
    const state = outcomes(fresh(), [
      [low, 'purpose', 0.95],
      [low, 'purpose', 0.9],
      [low, 'purpose', 1],
      [low, 'purpose', 0.9],
    ]);
    for (const prior of [empty, handPrior()]) {
      const before = { low: posterior(fresh(), prior, low, 0, PURPOSE), high: posterior(fresh(), prior, high, 0, PURPOSE) };
      const at = posterior(state, prior, low, 0, PURPOSE);
      const away = posterior(state, prior, high, 0, PURPOSE);
      const shiftAt = at.mean - before.low.mean;
      const shiftAway = away.mean - before.high.mean;
      expect(shiftAway).toBeGreaterThan(0);
      expect(shiftAway).toBeLessThan(shiftAt);
      const gainAt = before.low.variance - at.variance;
      const gainAway = before.high.variance - away.variance;
      expect(gainAway).toBeGreaterThan(0);
      expect(gainAway).toBeLessThan(gainAt);

      // Exactly: Cov(δ + ε_high, ȳ_low) = userVar(high cell); Var(ȳ_low) = userVar + contextVar_low + meanVar_low + σ²/n.
      const lowCell = cellIndex(low, PURPOSE);
      const highCell = cellIndex(high, PURPOSE);
      const n = state.slots[0]!.n[lowCell]!;
      const ybar = state.slots[0]!.s[lowCell]! / n;
      const a = prior.userVar[highCell]!;
      const varY = a + prior.contextVar[lowCell]! + prior.meanVar[lowCell]! + prior.noise[highCell]! / n;
      expect(Math.abs(away.mean - (prior.mean[highCell]! + (a / varY) * (ybar - prior.mean[lowCell]!)))).toBeLessThan(1e-9);
      expect(Math.abs(away.variance - (before.high.variance - (a * a) / varY))).toBeLessThan(1e-9);
    }
  });

  it('separates a tracked task type from the untyped context; an unknown task type reads as untyped', () => {
    const state = outcomes(fresh(), [
      [MEDIUM, 'purpose', 0.2],
      [MEDIUM, 'purpose', 0.3],
      [MEDIUM, 'purpose', 0.95, 'email'],
      [MEDIUM, 'purpose', 0.9, 'email'],
      [MEDIUM, 'purpose', 1, 'email'],
    ]);
    expect(slotOf(state, 'email')).toBe(1);
    expect(slotOf(state, 'report')).toBe(0);
    expect(slotOf(state, undefined)).toBe(0);
    const prior = handPrior();
    const typed = posterior(state, prior, MEDIUM, slotOf(state, 'email'), PURPOSE);
    const untyped = posterior(state, prior, MEDIUM, 0, PURPOSE);
    const unknown = posterior(state, prior, MEDIUM, slotOf(state, 'report'), PURPOSE);
    expect(typed.mean).toBeGreaterThan(untyped.mean + 0.01); // email tasks went well, the rest did not
    expect(unknown).toEqual(untyped);
  });

  it('with evidence in one task type only, matches the hand-derived update for typed and untyped targets', () => {
    const state = outcomes(fresh(), [
      [MEDIUM, 'purpose', 0.9, 'email'],
      [MEDIUM, 'purpose', 0.6, 'email'],
    ]);
    const prior = handPrior();
    const cell = cellIndex(MEDIUM, PURPOSE);
    const n = state.slots[1]!.n[cell]!;
    const residual = state.slots[1]!.s[cell]! / n - prior.mean[cell]!;
    const shared = prior.userVar[cell]! + prior.contextVar[cell]! + prior.meanVar[cell]!; // Var(δ + ε)
    const typedVar = shared + prior.userVar[cell]! + prior.contextVar[cell]!; // + Var(η)
    const varY = typedVar + prior.noise[cell]! / n;
    const typed = posterior(state, prior, MEDIUM, 1, PURPOSE);
    const untyped = posterior(state, prior, MEDIUM, 0, PURPOSE);
    expect(Math.abs(typed.mean - (prior.mean[cell]! + (typedVar / varY) * residual))).toBeLessThan(1e-9);
    expect(Math.abs(typed.variance - (typedVar - (typedVar * typedVar) / varY))).toBeLessThan(1e-9);
    expect(Math.abs(untyped.mean - (prior.mean[cell]! + (shared / varY) * residual))).toBeLessThan(1e-9);
    expect(Math.abs(untyped.variance - (shared - (shared * shared) / varY))).toBeLessThan(1e-9);
  });

  it('matches covariance-form Gaussian conditioning on random states with three task types (to 1e-9)', () => {
    const random = seededRandom(31);
    const taskTypes = [undefined, 'email', 'report', 'chores'];
    for (const prior of [empty, handPrior(), handPrior(() => 0)]) {
      let state = fresh();
      for (let i = 0; i < 40; i++) {
        const c = Math.floor(random() * COMPLEXITY_COUNT);
        const framing = FRAMINGS[Math.floor(random() * 3)]!; // evidence for some framings only
        state = addOutcome(state, c, taskTypes[Math.floor(random() * 4)], choice(framing), random(), random() < 0.5);
      }
      expect(state.slots).toHaveLength(4);
      for (let c = 0; c < COMPLEXITY_COUNT; c++) {
        for (let t = 0; t < state.slots.length; t++) {
          for (let i = 0; i < FRAMINGS.length; i++) {
            const slot = DIMENSION_OFFSET.framing + i;
            const got = posterior(state, prior, c, t, slot);
            const want = referencePosterior(state, prior, c, t, slot);
            expect(Math.abs(got.mean - want.mean)).toBeLessThan(1e-9);
            expect(Math.abs(got.variance - want.variance)).toBeLessThan(1e-9);
          }
        }
      }
    }
  });

  it('does not back off at all when the user-level spread is 0 (and stays finite)', () => {
    const prior = handPrior(() => 0);
    const state = outcomes(fresh(), [
      [0, 'purpose', 1],
      [0, 'purpose', 1],
    ]);
    const away = posterior(state, prior, 2, 0, PURPOSE);
    const cell = cellIndex(2, PURPOSE);
    expect(away.mean).toBeCloseTo(prior.mean[cell]!, 12);
    expect(away.variance).toBeCloseTo(prior.contextVar[cell]! + prior.meanVar[cell]!, 12);
    expect(Number.isFinite(posterior(state, prior, 0, 0, PURPOSE).mean)).toBe(true);
  });

  it('narrows with every further outcome, at the evidence’s complexity and elsewhere', () => {
    let state = fresh();
    let previous = { here: posterior(state, empty, MEDIUM, 0, PURPOSE), away: posterior(state, empty, 0, 0, PURPOSE) };
    for (let i = 0; i < 15; i++) {
      state = addOutcome(state, MEDIUM, undefined, choice('purpose'), 0.7, true);
      const next = { here: posterior(state, empty, MEDIUM, 0, PURPOSE), away: posterior(state, empty, 0, 0, PURPOSE) };
      expect(next.here.variance).toBeLessThan(previous.here.variance);
      expect(next.away.variance).toBeLessThan(previous.away.variance);
      expect(next.away.variance).toBeGreaterThan(next.here.variance);
      previous = next;
    }
  });

  it('ignores evidence about other values', () => {
    const base = outcomes(fresh(), [
      [MEDIUM, 'purpose', 0.8],
      [0, 'purpose', 0.4],
    ]);
    const a = addOutcome(base, MEDIUM, undefined, choice('challenge'), 1, true);
    const b = addOutcome(base, 2, 'email', choice('curiosity'), 0, false);
    const prior = handPrior();
    for (let c = 0; c < COMPLEXITY_COUNT; c++) expect(posterior(a, prior, c, 0, PURPOSE)).toEqual(posterior(b, prior, c, 0, PURPOSE));
  });

  it('lets 4 of the user’s own outcomes count at least as much as a large, unanimous population', () => {
    // A population with lots of evidence and no spread between users: the spreads sit at the PRIOR_CAP floor.
    const population = emptyPopulation();
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      const cell = cellIndex(c, PURPOSE);
      population.w[cell] = 5000;
      population.wr[cell] = 1000;
      population.n[cell] = 5000;
      population.same[2 * cell] = 0.001; // between-user variance 1e-6
      population.same[2 * cell + 1] = 1000;
      population.spread[2 * cell] = 10;
      population.spread[2 * cell + 1] = 1000;
    }
    const prior = compilePopulation(population);
    const cell = cellIndex(MEDIUM, PURPOSE);
    expect(prior.userVar[cell]! + prior.contextVar[cell]!).toBeCloseTo(prior.noise[cell]! / PRIOR_CAP, 12);
    const state = outcomes(fresh(), [
      [MEDIUM, 'purpose', 1],
      [MEDIUM, 'purpose', 1],
      [MEDIUM, 'purpose', 1],
      [MEDIUM, 'purpose', 1],
    ]);
    const n = state.slots[0]!.n[cell]!;
    const ybar = state.slots[0]!.s[cell]! / n;
    const { mean } = posterior(state, prior, MEDIUM, 0, PURPOSE);
    const userShare = (mean - prior.mean[cell]!) / (ybar - prior.mean[cell]!);
    expect(userShare).toBeGreaterThanOrEqual(n / (n + PRIOR_CAP) - 1e-9);
    expect(userShare).toBeLessThan(1);
  });

  it('gives every complexity its own prior mean (TASK_COMPLEXITY order)', () => {
    const prior = handPrior();
    const means = TASK_COMPLEXITY.map((_, c) => posterior(fresh(), prior, c, 0, PURPOSE).mean);
    expect(means).toEqual([0, 1, 2].map((c) => prior.mean[cellIndex(c, PURPOSE)]));
  });
});
