import { DIMENSION_NAMES } from '../../shared/domain/arms';
import { STEP_GRID, likelihoodStep, stepLogLikelihoodAt } from '../../shared/domain/engine/step-likelihood';

/** The step of a dimension by maximum likelihood over STEP_GRID (step-likelihood.ts). */
describe('step likelihood', () => {
  const G = STEP_GRID.length;
  /** Log-likelihoods peaked at grid point `peak` for dimension d, flat for the others. */
  const peaked = (d: number, peak: number, depth: number) =>
    Array.from({ length: DIMENSION_NAMES.length * G }, (_, i) => (Math.floor(i / G) === d ? -depth * ((i % G) - peak) ** 2 : 0));

  it('picks the grid point the outcomes favour, and the default step when they favour none', () => {
    const sums = peaked(2, 7, 50);
    expect(likelihoodStep(sums, 2, 0.1)).toBeCloseTo(STEP_GRID[7]!, 3);
    expect(likelihoodStep(sums, 1, 0.1)).toBeCloseTo(0.1, 1);
  });

  it('interpolates the log-likelihood between grid points in log step', () => {
    const sums = peaked(0, 4, 1);
    expect(stepLogLikelihoodAt(sums, 0, STEP_GRID[4]!)).toBeCloseTo(0, 10);
    const between = Math.sqrt(STEP_GRID[4]! * STEP_GRID[5]!);
    expect(stepLogLikelihoodAt(sums, 0, between)).toBeCloseTo(-0.5, 10);
    expect(stepLogLikelihoodAt(sums, 0, 10)).toBeCloseTo(sums[G - 1]!, 10);
  });
});
