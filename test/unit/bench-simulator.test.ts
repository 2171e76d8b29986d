import { seededRandom } from '../../shared/domain/random';
import { oraclePolicy, randomPolicy } from '../../scripts/bench/policies';
import { expectedCalibrationError, pairedDifference, runPolicy, summarize } from '../../scripts/bench/run';
import { mean } from '../../scripts/bench/stats';
import {
  bestChoice,
  complexityAt,
  createSimulation,
  MAJORITY_SHARE,
  preferencesAt,
  simulateOutcome,
  successProbability,
  taskTypeAt,
  utilitiesAt,
  WORLDS,
} from '../../scripts/bench/simulator';
import { DIMENSIONS, DIMENSION_NAMES } from '../../shared/domain/arms';
import { bayesReferencePolicy, favouritePosterior, framingKnownPolicy } from '../../scripts/bench/bayes-reference';
import { RidgeBlock } from '../../scripts/bench/squarecb';

/** The bench:learning simulator (scripts/bench): deterministic by seed, and it separates good from bad policies. */
describe('bench:learning simulator', () => {
  const trace = (seed: number) => {
    const sim = createSimulation(seed, 20, 30);
    const random = randomPolicy(seededRandom(seed));
    return sim.users.map((user) =>
      Array.from({ length: sim.interactions }, (_, i) => {
        const complexity = complexityAt(sim, user, i + 1);
        const { choice } = random.choose(user.index, { complexity, interaction: i + 1 });
        return [complexity, bestChoice(user, complexity, i + 1), simulateOutcome(sim, { user, complexity, interaction: i + 1, choice })];
      }),
    );
  };

  it('is deterministic given the seed and differs between seeds', () => {
    expect(createSimulation(7, 50)).toEqual(createSimulation(7, 50));
    expect(trace(7)).toEqual(trace(7));
    expect(trace(8)).not.toEqual(trace(7));
  });

  it('gives the oracle a clearly higher mean reward than uniform random', () => {
    const sim = createSimulation(3, 60, 40);
    const oracle = summarize(sim, runPolicy(sim, oraclePolicy(sim)));
    const random = summarize(sim, runPolicy(sim, randomPolicy(seededRandom(3))));
    expect(oracle.meanRewardAll).toBeGreaterThan(random.meanRewardAll + 0.2);
    expect(oracle.metrics.bestFramingShareLast10).toBe(1);
    expect(random.metrics.bestFramingShareLast10).toBeLessThan(0.4);
    // 40 interactions: nothing after the drift, and no range 41–80 to report
    expect(oracle.metrics.meanReward_41_80).toBeNull();
    expect(oracle.metrics.driftRecovery).toBeNull();
  });

  it('computes the expected calibration error over 10 equal-width bins', () => {
    const pairs = [
      { confidence: 0.95, hit: true },
      { confidence: 0.95, hit: false },
      { confidence: 0.05, hit: false },
      { confidence: 0.05, hit: false },
    ];
    // bin 9: |0.95 − 0.5| = 0.45 with weight 1/2; bin 0: |0.05 − 0| = 0.05 with weight 1/2
    expect(expectedCalibrationError(pairs)).toBeCloseTo(0.25, 10);
    expect(expectedCalibrationError([])).toBeNull();
  });

  it("SquareCB's incremental ridge regression equals the batch least-squares fit", () => {
    const random = seededRandom(5);
    const contexts = ['low', 'medium', 'high'] as const;
    const block = new RidgeBlock();
    const obs: Array<[number, number, number]> = [];
    for (let i = 0; i < 40; i++) {
      const o: [number, number, number] = [Math.floor(random() * 4), Math.floor(random() * 3), random()];
      obs.push(o);
      block.update(o[0], contexts[o[1]]!, o[2]);
    }
    // Batch ridge (λ = 1) over 4 user + 3 context one-hot features, by Gaussian elimination.
    const d = 7;
    const a = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
    const b = new Array<number>(d).fill(0);
    for (const [u, c, y] of obs) {
      for (const i of [u, 4 + c]) {
        b[i]! += y;
        for (const j of [u, 4 + c]) a[i]![j]! += 1;
      }
    }
    for (let col = 0; col < d; col++) {
      for (let row = col + 1; row < d; row++) {
        const f = a[row]![col]! / a[col]![col]!;
        for (let k = col; k < d; k++) a[row]![k]! -= f * a[col]![k]!;
        b[row]! -= f * b[col]!;
      }
    }
    const w = new Array<number>(d).fill(0);
    for (let row = d - 1; row >= 0; row--) {
      let s = b[row]!;
      for (let k = row + 1; k < d; k++) s -= a[row]![k]! * w[k]!;
      w[row] = s / a[row]![row]!;
    }
    for (let u = 0; u < 4; u++) {
      contexts.forEach((c, ci) => expect(block.predict(u, c)).toBeCloseTo(w[u]! + w[4 + ci]!, 10));
    }
  });
});

describe('bench:learning worlds', () => {
  const shareWithPopulationBest = (world: (typeof WORLDS)[keyof typeof WORLDS]) => {
    const sim = createSimulation(11, 400, 10, world);
    const popBest = sim.population.low.framing.indexOf(1);
    return sim.users.filter((u) => u.before.low.framing.indexOf(1) === popBest).length / sim.users.length;
  };

  it('sets how many users share the population favourite: majority + an own pick that happens to match', () => {
    expect(shareWithPopulationBest(WORLDS.default)).toBeCloseTo(0.6 + 0.4 / 5, 1);
    expect(shareWithPopulationBest(WORLDS['weak-majority'])).toBeCloseTo(0.2 + 0.8 / 5, 1);
  });

  it('sets how much each dimension moves the success probability', () => {
    for (const world of [WORLDS.default, WORLDS['equal-effects']]) {
      const sim = createSimulation(12, 5, 10, world);
      const user = sim.users[0]!;
      const best = bestChoice(user, 'medium', 1);
      const styles = utilitiesAt(user, 1).medium.style;
      const worst = styles.indexOf(Math.min(...styles));
      const other = { ...best, style: DIMENSIONS.style.values[worst]! };
      const gap =
        successProbability(world, { user, complexity: 'medium', interaction: 1, choice: best }) -
        successProbability(world, { user, complexity: 'medium', interaction: 1, choice: other });
      expect(gap).toBeCloseTo(world.weights.style * (1 - styles[worst]!), 10);
    }
  });

  it('sends task types only in the task-type worlds, and only typed-preferences lets them change preferences', () => {
    const types = (world: (typeof WORLDS)[keyof typeof WORLDS]) => {
      const sim = createSimulation(13, 30, 20, world);
      return sim.users.flatMap((user) => Array.from({ length: sim.interactions }, (_, i) => taskTypeAt(sim, user, i + 1)));
    };
    expect(new Set(types(WORLDS.default))).toEqual(new Set([undefined]));
    expect(new Set(types(WORLDS['task-types']))).toEqual(new Set(['type-0', 'type-1', 'type-2']));
    // Both task-type worlds send the same types for a seed: they differ only in whether the types matter.
    expect(types(WORLDS['typed-preferences'])).toEqual(types(WORLDS['task-types']));
    const ignored = createSimulation(13, 1, 1, WORLDS['task-types']);
    const followed = createSimulation(13, 1, 1, WORLDS['typed-preferences']);
    expect(['type-0', 'type-1', 'type-2'].map((t) => preferencesAt(ignored, 'low', t))).toEqual(['low', 'low', 'low']);
    expect(['type-0', 'type-1', 'type-2'].map((t) => preferencesAt(followed, 'medium', t))).toEqual(['medium', 'high', 'low']);
    expect(preferencesAt(followed, 'high', undefined)).toBe('high');
  });

  it('judges a typed request by the preferences that apply: the oracle serves them and earns what it does without task types', () => {
    const sim = createSimulation(14, 60, 20, WORLDS['typed-preferences']);
    const untyped = createSimulation(14, 60, 20, WORLDS.default);
    const records = runPolicy(sim, oraclePolicy(sim));
    expect(records.flat().every((r) => r.bestCombination)).toBe(true);
    const meanReward = (rs: { reward: number }[][]) => mean(rs.flat().map((r) => r.reward));
    expect(Math.abs(meanReward(records) - meanReward(runPolicy(untyped, oraclePolicy(untyped))))).toBeLessThan(0.03);
  });
});

describe('bench:learning paired comparison', () => {
  it('gives the mean per-user difference and the half-width of its 95% interval', () => {
    const { mean, halfWidth } = pairedDifference([1, 2.5, 4], [0, 0.5, 1]);
    expect(mean).toBeCloseTo(2, 12);
    expect(halfWidth).toBeCloseTo((1.96 * 1) / Math.sqrt(3), 12);
  });
});

describe('bench:learning Bayes reference', () => {
  const none = () => [0, 0, 0].map(() => [0, 0, 0, 0, 0]);
  /** One population for the runs below, each policy's run made once. */
  const sim = createSimulation(5, 120, 40);
  const once = <T>(run: () => T) => {
    let result: T | undefined;
    return () => (result ??= run());
  };
  const referenceRun = once(() => summarize(sim, runPolicy(sim, bayesReferencePolicy(sim))));
  const oracleRun = once(() => summarize(sim, runPolicy(sim, oraclePolicy(sim))));

  it('starts from the simulator prior: the population favourite with MAJORITY_SHARE + its share of own favourites', () => {
    const posterior = favouritePosterior(none(), [4, 1, 2], 0, MAJORITY_SHARE);
    expect(posterior[4]).toBeCloseTo(MAJORITY_SHARE + (1 - MAJORITY_SHARE) / 5, 10);
    for (const f of [0, 1, 2, 3]) expect(posterior[f]).toBeCloseTo((1 - MAJORITY_SHARE) / 5, 10);
    expect(posterior.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 10);
  });

  it('moves to an own favourite seen at another complexity once the population favourite fails', () => {
    const logLik = none();
    logLik[0]![4] = -6; // the population favourite at low failed
    logLik[1]![2] = 6; // framing 2 did well at medium
    const posterior = favouritePosterior(logLik, [4, 1, 3], 0, MAJORITY_SHARE);
    expect(posterior.indexOf(Math.max(...posterior))).toBe(2);
  });

  it('gets far closer to the oracle than the untrained baselines, up to interaction 40', () => {
    const reference = referenceRun().metrics;
    const oracle = oracleRun().metrics;
    const random = summarize(sim, runPolicy(sim, randomPolicy(seededRandom(5)))).metrics;
    expect(reference.meanReward_11_40!).toBeGreaterThan(0.8 * oracle.meanReward_11_40!);
    expect(reference.meanReward_11_40!).toBeGreaterThan(random.meanReward_11_40! + 0.2);
  });

  it('has a ceiling that knows each best framing: always the best framing, the population favourites elsewhere, between the reference and the oracle', () => {
    const policy = framingKnownPolicy(sim);
    const ceiling = summarize(sim, runPolicy(sim, policy));
    expect(ceiling.bestFramingShare11to40).toBe(1);
    const served: number[] = [];
    const populations: number[] = [];
    for (const user of sim.users)
      for (let i = 1; i <= sim.interactions; i++) {
        const complexity = complexityAt(sim, user, i);
        const { choice } = policy.choose(user.index, { complexity, interaction: i });
        for (const dim of ['style', 'complexityHandling', 'encouragement'] as const) {
          served.push(DIMENSIONS[dim].values.indexOf(choice[dim] as never));
          populations.push(sim.population[complexity][dim].indexOf(1));
        }
      }
    expect(served).toEqual(populations);
    const reference = referenceRun();
    const oracle = oracleRun();
    expect(reference.bestFramingShare11to40!).toBeLessThan(1);
    expect(ceiling.metrics.meanReward_11_40!).toBeGreaterThan(reference.metrics.meanReward_11_40!);
    expect(ceiling.metrics.meanReward_11_40!).toBeLessThan(oracle.metrics.meanReward_11_40!);
  });

  it("counts the best-framing share over interactions 11–40 of every user's run", () => {
    const record = (bestFraming: boolean) => ({
      reward: 0,
      bestFraming,
      framingIsDriftBest: false,
      bestValues: [bestFraming, false, false, false],
      bestCombination: false,
      confidence: null,
      explored: null,
    });
    // One user picks their best framing at interactions 11–20 only (1/3 of 11–40, none of 31–40), the other at 1–10 only.
    const from11to20 = Array.from({ length: 40 }, (_, i) => record(i >= 10 && i < 20));
    const upTo10 = Array.from({ length: 40 }, (_, i) => record(i < 10));
    expect(summarize(createSimulation(5, 2, 40), [from11to20, upTo10]).bestFramingShare11to40).toBeCloseTo(1 / 6, 12);
    expect(summarize(createSimulation(5, 2, 30), [from11to20.slice(0, 30), upTo10.slice(0, 30)]).bestFramingShare11to40).toBeNull();
  });

  it('counts per-dimension best picks and exploration over interactions 31–40, and exploration only for a policy that reports it', () => {
    // Interactions 31–40: style best in all, encouragement best in half, complexity handling in a fifth, all four in a tenth; explored in 3 of 10.
    const record = (i: number, explored: boolean | null) => {
      const late = i >= 30 && i < 40;
      const all = late && i < 32;
      const bestValues = [all, late, all, late && i % 2 === 0];
      return {
        reward: 0,
        bestFraming: all,
        framingIsDriftBest: false,
        bestValues,
        bestCombination: bestValues.every(Boolean),
        confidence: null,
        explored: explored === null ? null : late && i < 33,
      };
    };
    const sim = createSimulation(5, 1, 40);
    const said = summarize(sim, [Array.from({ length: 40 }, (_, i) => record(i, true))]).metrics;
    expect(said.bestStyleShareLast10).toBeCloseTo(1, 12);
    expect(said.bestEncouragementShareLast10).toBeCloseTo(0.5, 12);
    expect(said.bestComplexityShareLast10).toBeCloseTo(0.2, 12);
    expect(said.bestAllShareLast10).toBeCloseTo(0.1, 12);
    expect(said.exploredShare_31_40).toBeCloseTo(0.3, 12);
    expect(said.exploredShare_1_10).toBe(0);
    expect(said.exploredShare_71_80).toBeNull();
    const silent = summarize(sim, [Array.from({ length: 40 }, (_, i) => record(i, null))]).metrics;
    expect(silent.exploredShare_31_40).toBeNull();
  });

  it('makes the minor dimensions individual in individual-minor and mostly shared in popular-minor, each worth half the framing', () => {
    const bestShares = (world: (typeof WORLDS)[keyof typeof WORLDS]) => {
      const sim = createSimulation(21, 2000, 1, world);
      return DIMENSION_NAMES.map((dim) => {
        const population = sim.population.low[dim].indexOf(1);
        return sim.users.filter((u) => u.before.low[dim].indexOf(1) === population).length / sim.users.length;
      });
    };
    const individual = bestShares(WORLDS['individual-minor']);
    expect(individual[0]).toBeCloseTo(0.6 + 0.4 / 5, 1);
    // Own favourites only: the population's favourite is one value among the dimension's.
    for (const d of [1, 2, 3]) expect(individual[d]).toBeCloseTo(1 / DIMENSIONS[DIMENSION_NAMES[d]!].values.length, 1);
    const popular = bestShares(WORLDS['popular-minor']);
    for (const d of [1, 2, 3]) expect(popular[d]).toBeGreaterThan(0.75);
    for (const world of [WORLDS['individual-minor'], WORLDS['popular-minor']])
      for (const dim of ['style', 'complexityHandling', 'encouragement'] as const)
        expect(world.weights[dim]).toBeCloseTo(world.weights.framing / 2, 10);
  });
});
