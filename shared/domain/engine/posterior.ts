import type { EngineState } from './evidence';
import { MAX_TASK_TYPES } from './evidence';
import { COMPLEXITY_COUNT, cellIndex } from './layout';
import type { CompiledPrior } from './population';

/**
 * The posterior of one user's expected reward for one value in one context, under a
 * hierarchical Gaussian model (docs/adr/0007-learning-engine.md):
 *
 *   reward(u, complexity c, task type t, value a) = μ_pop(c, a) + δ_a + ε_{c,a} + η_{t,a} + noise
 *
 * μ_pop is the population prior's mean (with its own uncertainty, added to ε's variance);
 * δ_a ~ N(0, τ_u²) is what this user thinks of the value everywhere; ε_{c,a} ~ N(0, τ_c²)
 * is the user's complexity-specific deviation; η_{t,a} ~ N(0, τ_u² + τ_c²) exists for tracked
 * task types only — the population prior says nothing about task types, which are each user's
 * own labels, so a task type may move the user's view of a value as much as users differ from
 * one another; noise ~ N(0, σ²). A context the user has no evidence in therefore backs off to
 * δ (the user's context-free evidence) and the population mean, and a user with no evidence
 * at all gets the population prior. The posterior is exact: a Gaussian linear model with at
 * most 4 + MAX_TASK_TYPES parameters, solved by Cholesky on preallocated buffers.
 */
const MAX_PARAMS = 1 + COMPLEXITY_COUNT + MAX_TASK_TYPES;
const precision = new Float64Array(MAX_PARAMS * MAX_PARAMS);
const rhs = new Float64Array(MAX_PARAMS);
const target = new Float64Array(MAX_PARAMS);

/** Parameter index of a task-type slot's η (slot ≥ 1). */
const taskParam = (slot: number) => COMPLEXITY_COUNT + slot;

/** In-place Cholesky (lower) of the m×m matrix in `a`; then solves for rhs and target in place. */
function choleskySolve(a: Float64Array, m: number): void {
  for (let j = 0; j < m; j++) {
    let d = a[j * MAX_PARAMS + j]!;
    for (let k = 0; k < j; k++) d -= a[j * MAX_PARAMS + k]! * a[j * MAX_PARAMS + k]!;
    const ljj = Math.sqrt(d);
    a[j * MAX_PARAMS + j] = ljj;
    for (let i = j + 1; i < m; i++) {
      let s = a[i * MAX_PARAMS + j]!;
      for (let k = 0; k < j; k++) s -= a[i * MAX_PARAMS + k]! * a[j * MAX_PARAMS + k]!;
      a[i * MAX_PARAMS + j] = s / ljj;
    }
  }
  // Forward substitution L·y = v for both vectors.
  for (let i = 0; i < m; i++) {
    let sb = rhs[i]!;
    let st = target[i]!;
    for (let k = 0; k < i; k++) {
      sb -= a[i * MAX_PARAMS + k]! * rhs[k]!;
      st -= a[i * MAX_PARAMS + k]! * target[k]!;
    }
    rhs[i] = sb / a[i * MAX_PARAMS + i]!;
    target[i] = st / a[i * MAX_PARAMS + i]!;
  }
}

/**
 * Posterior mean and variance of the user's expected reward for value `slot` at `complexity`
 * in task-type slot `taskSlot` (0: untyped or unknown task type). Writes [mean, variance] to out.
 */
export function valuePosterior(
  state: EngineState,
  prior: CompiledPrior,
  complexity: number,
  taskSlot: number,
  slot: number,
  out: Float64Array,
): void {
  const m = 1 + COMPLEXITY_COUNT + (state.slots.length - 1);
  precision.fill(0, 0, MAX_PARAMS * MAX_PARAMS);
  rhs.fill(0);
  target.fill(0);
  const here = cellIndex(complexity, slot);
  const noise = prior.noise[here]!;
  // The user-level spread and the task-type spread are those of the target context's cell.
  precision[0] = 1 / prior.userVar[here]!;
  const taskVar = prior.userVar[here]! + prior.contextVar[here]!;
  for (let c = 0; c < COMPLEXITY_COUNT; c++) {
    const cell = cellIndex(c, slot);
    precision[(1 + c) * (MAX_PARAMS + 1)] = 1 / (prior.contextVar[cell]! + prior.meanVar[cell]!);
  }
  for (let t = 1; t < state.slots.length; t++) precision[taskParam(t) * (MAX_PARAMS + 1)] = 1 / taskVar;

  for (let t = 0; t < state.slots.length; t++) {
    const evidence = state.slots[t]!;
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      const cell = cellIndex(c, slot);
      const n = evidence.n[cell]!;
      if (n <= 0) continue;
      const a = n / noise;
      const r = (evidence.s[cell]! - n * prior.mean[cell]!) / noise;
      const p1 = 1 + c;
      // δ and ε_c always; η_t for tracked task types.
      precision[0]! += a;
      precision[p1 * MAX_PARAMS]! += a;
      precision[p1]! += a;
      precision[p1 * (MAX_PARAMS + 1)]! += a;
      rhs[0]! += r;
      rhs[p1]! += r;
      if (t > 0) {
        const p2 = taskParam(t);
        precision[p2 * (MAX_PARAMS + 1)]! += a;
        precision[p2 * MAX_PARAMS]! += a;
        precision[p2]! += a;
        precision[p2 * MAX_PARAMS + p1]! += a;
        precision[p1 * MAX_PARAMS + p2]! += a;
        rhs[p2]! += r;
      }
    }
  }
  target[0] = 1;
  target[1 + complexity] = 1;
  if (taskSlot > 0) target[taskParam(taskSlot)] = 1;

  // After the solve: rhs = L⁻¹b, target = L⁻¹x*; mean = x*ᵀP⁻¹b = (L⁻¹x*)·(L⁻¹b), var = |L⁻¹x*|².
  choleskySolve(precision, m);
  let mean = 0;
  let variance = 0;
  for (let i = 0; i < m; i++) {
    mean += target[i]! * rhs[i]!;
    variance += target[i]! * target[i]!;
  }
  out[0] = prior.mean[cellIndex(complexity, slot)]! + mean;
  out[1] = variance;
}
