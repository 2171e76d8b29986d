/**
 * How sharp the population's favourite looks when every value is alike and only noise tells
 * them apart (docs/adr/0009-favourite-model.md, decision 4).
 *
 * popBest (population-model.ts) is each value's probability of being the best, P(v largest),
 * for means m_v with standard errors σ_v. If the values' true means are equal, each m_v is the
 * common mean plus noise of standard deviation ψ·σ_v, where ψ ≤ 1 is the share of the standard
 * error that sampling explains (the rest is the bias floor population-model.ts adds). Then
 *
 *     s₀(k, ψ) = E_z[ (Σ_v π_v(ψ z)² − 1/k) / (1 − 1/k) ],   z ~ N(0, I_k),
 *     π_v(m) = P(v largest | means m, unit standard errors), floored at 10⁻⁴ and normalised
 *
 * — a sharpness the data show even without a population favourite: ≈ 0.28 for four values at
 * ψ = 1, so noise alone looks a quarter known.
 *
 * NOISE_SHARPNESS[k][i] = s₀(k, i / 10), by Monte Carlo with 20,000 draws per point (standard
 * error about 0.002); test/unit/noise-sharpness.test.ts draws some points again.
 */
const NOISE_SHARPNESS: Readonly<Record<number, readonly number[]>> = {
  2: [0.0, 0.006, 0.024, 0.053, 0.09, 0.128, 0.17, 0.213, 0.255, 0.296, 0.335],
  3: [0.0, 0.005, 0.021, 0.046, 0.076, 0.111, 0.148, 0.187, 0.227, 0.267, 0.301],
  4: [0.0, 0.005, 0.018, 0.04, 0.068, 0.1, 0.135, 0.171, 0.209, 0.247, 0.281],
  5: [0.0, 0.004, 0.016, 0.036, 0.062, 0.091, 0.126, 0.16, 0.195, 0.229, 0.264],
};
const STEPS = 10;

/** s₀(k, ψ) for k values (2 to 5), linearly interpolated in ψ (clamped to [0, 1]); 0 for fewer than two values. */
export function noiseSharpness(k: number, sampledShare: number): number {
  const table = NOISE_SHARPNESS[k];
  if (!table) {
    if (k < 2) return 0;
    throw new Error(`no noise sharpness for ${k} values`);
  }
  const x = Math.min(1, Math.max(0, sampledShare)) * STEPS;
  const i = Math.min(STEPS - 1, Math.floor(x));
  return table[i]! + (x - i) * (table[i + 1]! - table[i]!);
}
