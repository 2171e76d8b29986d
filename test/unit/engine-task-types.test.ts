import { TASK_COMPLEXITY } from '../../shared/domain/arms';
import { createEngine } from '../../shared/domain/engine/engine';
import { PERSISTENCE, favouritePosterior, type DimensionModel } from '../../shared/domain/engine/favourite';
import { CONTEXT_CELL_COUNT, COMPLEXITY_COUNT, DIMENSION_OFFSET, VALUE_COUNT, contextComplexity } from '../../shared/domain/engine/layout';
import { NEUTRAL_GRID, logistic, neutralShare } from '../../shared/domain/engine/neutral-share';
import { emptyPopulation, observePopulation } from '../../shared/domain/engine/population';
import { compilePopulation, type CompiledPopulation } from '../../shared/domain/engine/population-model';
import { createScratch } from '../../shared/domain/engine/scratch';
import { userPosterior } from '../../shared/domain/engine/task-types';
import { seededRandom } from '../../shared/domain/random';
import { enginePolicy } from '../../scripts/bench/policies';
import { runPolicy } from '../../scripts/bench/run';
import { createSimulation, WORLDS } from '../../scripts/bench/simulator';
import { trainedTenant } from '../../scripts/bench/tenant';
import { inferenceOf } from '../support/engine';

const engine = createEngine();
const scratch = createScratch();
const D = 4;
const K = 5;
const FRAMING = DIMENSION_OFFSET.framing;
/** Contexts of a user with one task type: the three untyped complexities, then the typed ones. */
const CONTEXTS = 2 * COMPLEXITY_COUNT;

/** A tenant with a population favourite per complexity (so popBest is informative) and reward levels. */
function tenant(): CompiledPopulation {
  const random = seededRandom(5);
  return trainedTenant(
    random,
    40,
    12,
    (i) => ({ taskComplexity: TASK_COMPLEXITY[i % 3]! }),
    (choice, r) => (choice.framing === 'purpose' ? 0.7 + 0.3 * r() : 0.2 * r()),
  );
}

/** log Σ over favourite assignments of prior × likelihood, for one dimension's favourites in `contexts` contexts, by enumeration. */
function bruteForce(m: DimensionModel, n: Float64Array, s: Float64Array, contexts: number) {
  const marg = new Float64Array(CONTEXT_CELL_COUNT);
  let total = 0;
  let followerMass = 0;
  const f = new Array<number>(contexts).fill(0);
  for (let code = 0; code < K ** contexts; code++) {
    for (let x = 0, rest = code; x < contexts; x++, rest = Math.floor(rest / K)) f[x] = rest % K;
    const popBest = (x: number) => m.popBest[contextComplexity(x) * VALUE_COUNT + m.offset + f[x]!]!;
    const follower = m.follow * f.reduce((p, _, x) => p * popBest(x), 1);
    let individual = 0;
    for (let g = 0; g < K; g++)
      individual += ((1 - m.follow) / K) * f.reduce((p, v) => p * ((v === g ? PERSISTENCE : 0) + (1 - PERSISTENCE) / K), 1);
    let ll = 0;
    for (let x = 0; x < contexts; x++) {
      const cell = x * VALUE_COUNT + m.offset + f[x]!;
      ll += m.weight * (s[cell]! - n[cell]! * m.mid[contextComplexity(x)]!);
    }
    const weight = (follower + individual) * Math.exp(ll);
    total += weight;
    followerMass += follower * Math.exp(ll);
    f.forEach((v, x) => (marg[x * VALUE_COUNT + m.offset + v]! += weight));
  }
  return { logEvidence: Math.log(total), marg: marg.map((p) => p / total), follower: followerMass / total };
}

/** Framing evidence only: `counts[x][v]` outcomes of value v in context x, each with credited reward `rewards[x][v]`. */
function framingEvidence(counts: number[][], rewards: number[][]) {
  const n = new Float64Array(CONTEXT_CELL_COUNT);
  const s = new Float64Array(CONTEXT_CELL_COUNT);
  counts.forEach((row, x) =>
    row.forEach((count, v) => {
      n[x * VALUE_COUNT + FRAMING + v] = count;
      s[x * VALUE_COUNT + FRAMING + v] = count * rewards[x]![v]!;
    }),
  );
  return { n, s };
}

describe('userPosterior (task types neutral or not)', () => {
  const prior = tenant();
  const framing = prior.dimensions[0]!;

  it('without typed contexts is favouritePosterior per dimension, with log Bayes factor 0', () => {
    const random = seededRandom(2);
    const n = Float64Array.from({ length: CONTEXT_CELL_COUNT }, (_, i) =>
      i < COMPLEXITY_COUNT * VALUE_COUNT ? Math.floor(random() * 4) : 0,
    );
    const s = n.map((count) => count * random());
    const favourite = new Float64Array(CONTEXT_CELL_COUNT);
    const follower = new Float64Array(D);
    expect(userPosterior(prior, { n, s, contexts: COMPLEXITY_COUNT }, { favourite, follower }, scratch.inference.posterior)).toBe(0);
    const expected = new Float64Array(CONTEXT_CELL_COUNT);
    prior.dimensions.forEach((model, d) =>
      expect(follower[d]).toBe(
        favouritePosterior(model, { n, s, contexts: COMPLEXITY_COUNT }, expected, scratch.inference.posterior.favourite),
      ),
    );
    expect(favourite).toEqual(expected);
  });

  it('matches enumeration: the Bayes factor of pooled vs separate task types, and the beliefs mixed by the tenant share (to 1e-9)', () => {
    const random = seededRandom(11);
    for (let trial = 0; trial < 4; trial++) {
      const counts = Array.from({ length: CONTEXTS }, () =>
        Array.from({ length: K }, () => (random() < 0.5 ? 0 : Math.floor(random() * 4))),
      );
      const rewards = Array.from({ length: CONTEXTS }, () => Array.from({ length: K }, () => random()));
      const { n, s } = framingEvidence(counts, rewards);
      const pooled = framingEvidence(
        [0, 1, 2].map((c) => counts[c]!.map((count, v) => count + counts[c + COMPLEXITY_COUNT]![v]!)),
        [0, 1, 2].map((c) =>
          counts[c]!.map((count, v) => {
            const typed = counts[c + COMPLEXITY_COUNT]![v]!;
            return count + typed === 0 ? 0 : (count * rewards[c]![v]! + typed * rewards[c + COMPLEXITY_COUNT]![v]!) / (count + typed);
          }),
        ),
      );
      const neutral = bruteForce(framing, pooled.n, pooled.s, COMPLEXITY_COUNT);
      const typed = bruteForce(framing, n, s, CONTEXTS);
      const favourite = new Float64Array(CONTEXT_CELL_COUNT);
      const follower = new Float64Array(D);
      const logBayes = userPosterior(prior, { n, s, contexts: CONTEXTS }, { favourite, follower }, scratch.inference.posterior);
      expect(logBayes).toBeCloseTo(neutral.logEvidence - typed.logEvidence, 9);
      const share = logistic(prior.typeNeutralLogit);
      const p = 1 / (1 + ((1 - share) / share) * Math.exp(-logBayes));
      expect(follower[0]).toBeCloseTo(p * neutral.follower + (1 - p) * typed.follower, 9);
      for (let x = 0; x < CONTEXTS; x++)
        for (let v = 0; v < K; v++) {
          const expected =
            p * neutral.marg[contextComplexity(x) * VALUE_COUNT + FRAMING + v]! + (1 - p) * typed.marg[x * VALUE_COUNT + FRAMING + v]!;
          expect(favourite[x * VALUE_COUNT + FRAMING + v]).toBeCloseTo(expected, 9);
        }
    }
  });

  it('favours pooling when the task types agree and separate favourites when they differ', () => {
    // Ten successes with value 2 untyped at medium; ten more in the task type with value 2 (agree) or value 4 (differ).
    const evidence = (typedValue: number) => {
      const counts = Array.from({ length: CONTEXTS }, () => new Array<number>(K).fill(0));
      const rewards = Array.from({ length: CONTEXTS }, () => new Array<number>(K).fill(0));
      counts[1]![2] = 10;
      rewards[1]![2] = 0.9;
      counts[1 + COMPLEXITY_COUNT]![typedValue] = 10;
      rewards[1 + COMPLEXITY_COUNT]![typedValue] = 0.9;
      return framingEvidence(counts, rewards);
    };
    const favourite = new Float64Array(CONTEXT_CELL_COUNT);
    const follower = new Float64Array(D);
    const agree = evidence(2);
    expect(
      userPosterior(prior, { n: agree.n, s: agree.s, contexts: CONTEXTS }, { favourite, follower }, scratch.inference.posterior),
    ).toBeGreaterThan(0);
    const differ = evidence(4);
    expect(
      userPosterior(prior, { n: differ.n, s: differ.s, contexts: CONTEXTS }, { favourite, follower }, scratch.inference.posterior),
    ).toBeLessThan(-5);
    expect(favourite[(1 + COMPLEXITY_COUNT) * VALUE_COUNT + FRAMING + 4]).toBeGreaterThan(0.9);
    expect(favourite[1 * VALUE_COUNT + FRAMING + 2]).toBeGreaterThan(0.9);
  });
});

describe('the tenant’s task-type-neutral share', () => {
  /** The log-likelihood sums of a population that saw each user's log Bayes factor `weight` times. */
  const loglik = (users: Array<[logBayes: number, weight: number]>) => {
    const delta = emptyPopulation();
    const prior = compilePopulation(emptyPopulation());
    const none = new Float64Array(D);
    for (const [neutralLogBayes, typedWeight] of users)
      observePopulation(delta, {
        offsets: prior.offsets,
        complexity: 0,
        cells: [0, 5, 9, 12],
        probabilities: [1, 1, 1, 1],
        reward: 0,
        credited: none,
        error: 0,
        userWeight: none,
        follower: none,
        favS: none,
        favN: none,
        otherS: none,
        otherN: none,
        contrastExcess: none,
        contrastScale: none,
        typedWeight,
        neutralLogBayes,
      });
    return delta.neutralLogLikelihood;
  };

  it('is 1/2 without typed evidence, and untyped outcomes add nothing', () => {
    expect(neutralShare(emptyPopulation().neutralLogLikelihood)).toBeCloseTo(0.5, 12);
    expect(loglik([[3, 0]])).toEqual(new Array(NEUTRAL_GRID.length).fill(0));
    expect(logistic(compilePopulation(emptyPopulation()).typeNeutralLogit)).toBeCloseTo(0.5, 12);
  });

  it('adds t · log(share · B + 1 − share) at every grid point', () => {
    const sums = loglik([[Math.log(3), 0.5]]);
    NEUTRAL_GRID.forEach((share, g) => expect(sums[g]).toBeCloseTo(0.5 * Math.log(share * 3 + 1 - share), 12));
  });

  it('is the maximum-likelihood share: half the users 3 : 1 for pooling and half certain against gives 1/4', () => {
    // Σ log(3λ + 1 − λ) + Σ log(1 − λ) is largest where 2 / (1 + 2λ) = 1 / (1 − λ), λ = 1/4.
    const users: Array<[number, number]> = [];
    for (let u = 0; u < 500; u++) users.push([Math.log(3), 1], [-30, 1]);
    expect(Math.abs(neutralShare(loglik(users)) - 0.25)).toBeLessThan(0.01); // the grid's parabola: 0.243
    // Every user for pooling: the top of the grid; every user against: the bottom.
    expect(neutralShare(loglik(new Array(100).fill([4, 1])))).toBeCloseTo(NEUTRAL_GRID[NEUTRAL_GRID.length - 1]!, 6);
    expect(neutralShare(loglik(new Array(100).fill([-4, 1])))).toBeCloseTo(NEUTRAL_GRID[0]!, 6);
  });

  it('is learned from the users: high where task types do not change preferences, low where they do (bench worlds, 80 users)', () => {
    const learnedShare = (world: 'task-types' | 'typed-preferences') => {
      const sim = createSimulation(3, 80, 30, WORLDS[world]);
      // Outcomes merged into the prior in batches of 25, as the worker does.
      const policy = enginePolicy(engine, seededRandom(4), 25);
      runPolicy(sim, policy);
      const prior = policy.population();
      // A typed user's beliefs mix both models: the tenant's share is what inference starts from.
      expect(inferenceOf(policy.state(0), prior).neutralLogBayes).not.toBe(0);
      return logistic(prior.typeNeutralLogit);
    };
    expect(learnedShare('task-types')).toBeGreaterThan(0.8);
    expect(learnedShare('typed-preferences')).toBeLessThan(0.2);
  });
});
