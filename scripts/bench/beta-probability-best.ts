/**
 * P(arm i has the highest true mean) for independent Beta posteriors:
 * ∫ pdf_i(x) · ∏_{j≠i} cdf_j(x) dx, integrated on a grid over the region where the posteriors
 * have mass, with each Beta density evaluated exactly (normalised on the grid) and each CDF
 * as its running sum. Deterministic and cheap, unlike Monte Carlo, and accurate also for the
 * small, skewed posteriors of users with few outcomes.
 */
export interface BetaParams {
  alpha: number;
  beta: number;
}

const GRID = 128;
const SPREAD = 7;

export function probabilityBest(arms: readonly BetaParams[]): number[] {
  const k = arms.length;
  if (k === 1) return [1];
  let lo = 1;
  let hi = 0;
  for (const { alpha, beta } of arms) {
    const n = alpha + beta;
    const mean = alpha / n;
    const sd = Math.sqrt((alpha * beta) / (n * n * (n + 1)));
    lo = Math.min(lo, mean - SPREAD * sd);
    hi = Math.max(hi, mean + SPREAD * sd);
  }
  lo = Math.max(0, lo);
  hi = Math.min(1, hi);
  const step = (hi - lo) / GRID;

  // density[i][g] on grid midpoints, normalised so each arm's mass sums to 1.
  const density: Float64Array[] = [];
  for (const { alpha, beta } of arms) {
    const row = new Float64Array(GRID);
    let max = -Infinity;
    for (let g = 0; g < GRID; g++) {
      const x = lo + (g + 0.5) * step;
      row[g] = (alpha - 1) * Math.log(x) + (beta - 1) * Math.log(1 - x);
      if (row[g]! > max) max = row[g]!;
    }
    let total = 0;
    for (let g = 0; g < GRID; g++) {
      row[g] = Math.exp(row[g]! - max);
      total += row[g]!;
    }
    for (let g = 0; g < GRID; g++) row[g]! /= total;
    density.push(row);
  }

  const result = new Array<number>(k).fill(0);
  const cdf = new Float64Array(k); // mass below the current cell
  for (let g = 0; g < GRID; g++) {
    for (let i = 0; i < k; i++) {
      // Within a cell, competitors count half their own cell's mass (midpoint rule).
      let others = 1;
      for (let j = 0; j < k; j++) if (j !== i) others *= cdf[j]! + 0.5 * density[j]![g]!;
      result[i]! += density[i]![g]! * others;
    }
    for (let j = 0; j < k; j++) cdf[j]! += density[j]![g]!;
  }
  const sum = result.reduce((s, p) => s + p, 0);
  return sum > 0 ? result.map((p) => p / sum) : result.map(() => 1 / k);
}
