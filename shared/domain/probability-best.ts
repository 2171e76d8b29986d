/**
 * P(arm i has the highest true mean) for independent Beta posteriors, by numerical
 * integration of pdf_i(x)·∏_{j≠i} cdf_j(x) with a normal approximation of each Beta.
 * Deterministic and cheap (a fixed grid), unlike Monte Carlo.
 */
export interface BetaParams {
  alpha: number;
  beta: number;
}

const GRID = 96;

function erf(x: number): number {
  // Abramowitz–Stegun 7.1.26, |error| < 1.5e-7.
  const sign = x < 0 ? -1 : 1;
  const ax = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * ax);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-ax * ax);
  return sign * y;
}

export function probabilityBest(arms: readonly BetaParams[]): number[] {
  const k = arms.length;
  if (k === 1) return [1];
  const means = arms.map(({ alpha, beta }) => alpha / (alpha + beta));
  const sds = arms.map(({ alpha, beta }) => {
    const n = alpha + beta;
    return Math.max(1e-4, Math.sqrt((alpha * beta) / (n * n * (n + 1))));
  });
  const lo = Math.min(...means.map((m, i) => m - 5 * sds[i]!));
  const hi = Math.max(...means.map((m, i) => m + 5 * sds[i]!));
  const step = (hi - lo) / GRID;
  const result = new Array<number>(k).fill(0);
  const cdf = new Array<number>(k);
  for (let g = 0; g < GRID; g++) {
    const x = lo + (g + 0.5) * step;
    let product = 1;
    for (let j = 0; j < k; j++) {
      cdf[j] = 0.5 * (1 + erf((x - means[j]!) / (sds[j]! * Math.SQRT2)));
      product *= cdf[j]!;
    }
    for (let i = 0; i < k; i++) {
      const z = (x - means[i]!) / sds[i]!;
      const pdf = Math.exp(-0.5 * z * z) / (sds[i]! * Math.sqrt(2 * Math.PI));
      const others = cdf[i]! > 1e-300 ? product / cdf[i]! : othersProduct(cdf, i);
      result[i]! += pdf * others * step;
    }
  }
  const total = result.reduce((s, p) => s + p, 0);
  return total > 0 ? result.map((p) => p / total) : result.map(() => 1 / k);
}

function othersProduct(cdf: number[], skip: number): number {
  let product = 1;
  for (let j = 0; j < cdf.length; j++) if (j !== skip) product *= cdf[j]!;
  return product;
}
