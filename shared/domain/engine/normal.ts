/**
 * Normal-distribution helpers for the engine: the CDF and the probability that one of several
 * independent Gaussian arms is the largest (which is also Thompson sampling's chance of
 * selecting it).
 */

/** Φ(x), via the complementary error function (Numerical Recipes' erfcc Chebyshev fit; |error| < 1.2e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * z);
  const tail =
    0.5 *
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 1 - tail : tail;
}

/** Φ tabulated on [-TABLE_MAX, TABLE_MAX] in steps of 1/TABLE_RESOLUTION; linear interpolation errs < 1e-5. */
const TABLE_MAX = 8;
const TABLE_RESOLUTION = 64;
const TABLE = Float64Array.from({ length: 2 * TABLE_MAX * TABLE_RESOLUTION + 1 }, (_, i) => normalCdf(i / TABLE_RESOLUTION - TABLE_MAX));

/** Φ(x) from the table: the engine's hot loop evaluates it hundreds of times per decision. */
export function fastNormalCdf(x: number): number {
  const position = (x + TABLE_MAX) * TABLE_RESOLUTION;
  if (position <= 0) return 0;
  if (position >= TABLE.length - 1) return 1;
  const i = Math.floor(position);
  const f = position - i;
  return TABLE[i]! + f * (TABLE[i + 1]! - TABLE[i]!);
}

/** Simpson's rule on `nodes` points over z ∈ [-Z_MAX, Z_MAX]: nodes and weights × φ(z). */
const Z_MAX = 6;
function quadrature(nodes: number): { z: Float64Array; w: Float64Array } {
  const step = (2 * Z_MAX) / (nodes - 1);
  const z = Float64Array.from({ length: nodes }, (_, i) => -Z_MAX + i * step);
  const w = Float64Array.from(
    z,
    (x, i) => ((i === 0 || i === nodes - 1 ? 1 : i % 2 === 1 ? 4 : 2) * step * Math.exp(-0.5 * x * x)) / (3 * Math.sqrt(2 * Math.PI)),
  );
  return { z, w };
}
/** Coarse nodes suffice while arm i is not much wider than its rivals; finer ones when it is. */
const COARSE = quadrature(33);
const FINE = quadrature(161);
const COARSE_MAX_RATIO = 2.5;

/**
 * P(arm i has the largest value) for independent arms X_j ~ N(mean_j, sd_j²):
 * ∫ φ(z) ∏_{j≠i} Φ((mean_i + sd_i·z − mean_j) / sd_j) dz. Deterministic; accurate to about
 * 1e-3 (finer nodes are used when arm i is much wider than a rival).
 */
export function probabilityLargest(i: number, means: ArrayLike<number>, sds: ArrayLike<number>, count = means.length): number {
  if (count === 1) return 1;
  const mi = means[i]!;
  const si = sds[i]!;
  let narrowest = Infinity;
  for (let j = 0; j < count; j++) if (j !== i && sds[j]! < narrowest) narrowest = sds[j]!;
  const { z, w } = si > COARSE_MAX_RATIO * narrowest ? FINE : COARSE;
  let total = 0;
  for (let g = 0; g < z.length; g++) {
    const x = mi + si * z[g]!;
    let product = w[g]!;
    for (let j = 0; j < count && product > 1e-12; j++) {
      if (j === i) continue;
      product *= fastNormalCdf((x - means[j]!) / sds[j]!);
    }
    total += product;
  }
  return Math.min(1, Math.max(0, total));
}
