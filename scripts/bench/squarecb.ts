import { DIMENSION_NAMES, TASK_COMPLEXITY, type Choice, type Dimension, type TaskComplexity } from '../../shared/domain/arms';
import type { Random } from '../../shared/domain/random';
import { valuesOf, type Policy } from './policies';

/**
 * SquareCB (Foster & Rakhlin 2020, "Beyond UCB"), as Vowpal Wabbit's
 * `--cb_explore_adf --squarecb` runs it, one instance per dimension:
 *
 * - regression oracle: online least squares on the observed cost (1 − reward) of the chosen
 *   action only (VW's `mtr`, no importance weighting), with one-hot features user × value and
 *   context(complexity) × value, i.e. ŷ(u, c, a) = w[u,a] + v[c,a]. Here it is exact ridge
 *   regression (λ = RIDGE_LAMBDA) refitted after every example, the strongest oracle of
 *   this family;
 * - exploration by inverse-gap weighting: with a* the first action of minimal predicted
 *   cost, p(a) = 1 / (K + γ·(ŷ_a − ŷ_a*)) for a ≠ a*, and a* gets the remainder;
 * - γ = gammaScale · t^gammaExponent, t = examples learned so far (VW's --gamma_scale and
 *   --gamma_exponent; VW's defaults are 10 and 0.5). gammaExponent 0 is a fixed γ.
 *
 * The features of one value never touch another value's, so the ridge problem splits into one
 * block per (dimension, value), each over users + 3 contexts. Eliminating the user weights
 * leaves a 3×3 system (a Schur complement) that is kept up to date in O(1) per example, so
 * every prediction is the exact least-squares fit at a constant cost.
 */
export interface SquareCBParams {
  gammaScale: number;
  gammaExponent: number;
}

const RIDGE_LAMBDA = 1;
const CONTEXTS = TASK_COMPLEXITY.length;
const contextIndex = (c: TaskComplexity) => TASK_COMPLEXITY.indexOf(c);

interface UserStats {
  n: number;
  /** Sum of targets. */
  b: number;
  /** Examples per context. */
  nc: number[];
}

/** Exact ridge regression for one (dimension, value): target ≈ w[user] + v[context]. */
export class RidgeBlock {
  private readonly users = new Map<number, UserStats>();
  private readonly contextN = new Array<number>(CONTEXTS).fill(0);
  private readonly contextB = new Array<number>(CONTEXTS).fill(0);
  /** S[c][c'] = Σ_u n_uc·n_uc' / (λ + n_u);  T[c] = Σ_u n_uc·b_u / (λ + n_u). */
  private readonly s = Array.from({ length: CONTEXTS }, () => new Array<number>(CONTEXTS).fill(0));
  private readonly t = new Array<number>(CONTEXTS).fill(0);
  private v: number[] | null = null;

  private addUser(u: UserStats, sign: 1 | -1) {
    const d = RIDGE_LAMBDA + u.n;
    for (let c = 0; c < CONTEXTS; c++) {
      this.t[c]! += (sign * u.nc[c]! * u.b) / d;
      for (let c2 = 0; c2 < CONTEXTS; c2++) this.s[c]![c2]! += (sign * u.nc[c]! * u.nc[c2]!) / d;
    }
  }

  update(userId: number, complexity: TaskComplexity, target: number) {
    let u = this.users.get(userId);
    if (!u) {
      u = { n: 0, b: 0, nc: new Array<number>(CONTEXTS).fill(0) };
      this.users.set(userId, u);
    }
    const c = contextIndex(complexity);
    this.addUser(u, -1);
    u.n += 1;
    u.b += target;
    u.nc[c]! += 1;
    this.addUser(u, 1);
    this.contextN[c]! += 1;
    this.contextB[c]! += target;
    this.v = null;
  }

  /** Context weights: solves [(λ + N_c)·δ − S] v = B_c − T by Gaussian elimination. */
  private contextWeights(): number[] {
    if (this.v) return this.v;
    const m = this.s.map((row, c) => row.map((x, c2) => (c === c2 ? RIDGE_LAMBDA + this.contextN[c]! : 0) - x));
    const rhs = this.contextB.map((b, c) => b - this.t[c]!);
    for (let col = 0; col < CONTEXTS; col++) {
      for (let row = col + 1; row < CONTEXTS; row++) {
        const f = m[row]![col]! / m[col]![col]!;
        for (let k = col; k < CONTEXTS; k++) m[row]![k]! -= f * m[col]![k]!;
        rhs[row]! -= f * rhs[col]!;
      }
    }
    const v = new Array<number>(CONTEXTS).fill(0);
    for (let row = CONTEXTS - 1; row >= 0; row--) {
      let sum = rhs[row]!;
      for (let k = row + 1; k < CONTEXTS; k++) sum -= m[row]![k]! * v[k]!;
      v[row] = sum / m[row]![row]!;
    }
    this.v = v;
    return v;
  }

  predict(userId: number, complexity: TaskComplexity): number {
    const v = this.contextWeights();
    const u = this.users.get(userId);
    let w = 0;
    if (u) {
      let sum = u.b;
      for (let c = 0; c < CONTEXTS; c++) sum -= u.nc[c]! * v[c]!;
      w = sum / (RIDGE_LAMBDA + u.n);
    }
    return w + v[contextIndex(complexity)]!;
  }
}

/** SquareCB's action distribution from predicted costs (VW's vanilla, non-`--elim` variant). */
export function inverseGapWeights(costs: readonly number[], gamma: number): number[] {
  let best = 0;
  for (let a = 1; a < costs.length; a++) if (costs[a]! < costs[best]!) best = a;
  const k = costs.length;
  const p = costs.map((cost, a) => (a === best ? 0 : 1 / (k + gamma * (cost - costs[best]!))));
  p[best] = 1 - p.reduce((sum, x) => sum + x, 0);
  return p;
}

function sample(p: readonly number[], random: Random): number {
  let u = random();
  for (let a = 0; a < p.length; a++) {
    u -= p[a]!;
    if (u < 0) return a;
  }
  return p.length - 1;
}

export function squareCBPolicy(random: Random, params: SquareCBParams): Policy {
  const blocks = {} as Record<Dimension, RidgeBlock[]>;
  for (const dim of DIMENSION_NAMES) blocks[dim] = valuesOf(dim).map(() => new RidgeBlock());
  let counter = 0;
  return {
    name: 'squareCB',
    choose(userId, context) {
      const gamma = params.gammaScale * Math.pow(counter, params.gammaExponent);
      const choice = {} as Record<Dimension, string>;
      let probability = 1;
      for (const dim of DIMENSION_NAMES) {
        const p = inverseGapWeights(
          blocks[dim].map((block) => block.predict(userId, context.complexity)),
          gamma,
        );
        const chosen = sample(p, random);
        probability *= p[chosen]!;
        choice[dim] = valuesOf(dim)[chosen]!;
      }
      return { choice: choice as Choice, probability, confidence: null };
    },
    update(userId, { context, choice, reward }) {
      for (const dim of DIMENSION_NAMES) {
        blocks[dim][valuesOf(dim).indexOf(choice[dim])]!.update(userId, context.complexity, 1 - reward);
      }
      counter += 1;
    },
  };
}
