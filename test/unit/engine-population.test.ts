import { DIMENSION_NAMES, FRAMINGS, STYLES, TASK_COMPLEXITY, type Choice } from '../../shared/domain/arms';
import { createEngine, sharpness } from '../../shared/domain/engine/engine';
import { createScratch } from '../../shared/domain/engine/scratch';
import { favouritePosterior } from '../../shared/domain/engine/favourite';
import { choosingBeliefs, inferUser, priorBeliefs } from '../../shared/domain/engine/inference';
import {
  BELIEF_CELL_COUNT,
  CELL_COUNT,
  COMPLEXITY_COUNT,
  CONTEXT_CELL_COUNT,
  DIMENSION_OFFSET,
  VALUE_COUNT,
  argmax,
  cellIndex,
  choiceSlots,
} from '../../shared/domain/engine/layout';
import { NEUTRAL_GRID } from '../../shared/domain/engine/neutral-share';
import { userPosterior } from '../../shared/domain/engine/task-types';
import { fillUnknownContexts } from '../../shared/domain/engine/complexity-shares';
import { historyLength } from '../../shared/domain/engine/state';
import {
  MAX_WEIGHT,
  POPULATION_DECAY,
  emptyPopulation,
  mergePopulation,
  observePopulation,
  parsePopulation,
  type PopulationObservation,
  type PopulationPrior,
} from '../../shared/domain/engine/population';
import {
  DEFAULT_STEP,
  MAX_FOLLOW,
  MEAN_BIAS,
  MEAN_SHRINK,
  KNOWN_SHARPNESS,
  choosingShare,
  compilePopulation,
  popBestSharpness,
  type CompiledPopulation,
} from '../../shared/domain/engine/population-model';
import { seededRandom, type Random } from '../../shared/domain/random';
import { trainedTenant, unanimousTenant } from '../../scripts/bench/tenant';
import { inferenceOf } from '../support/engine';

const engine = createEngine();
const scratch = createScratch();
const LOW = 0;
const D = DIMENSION_NAMES.length;
const choice = (framing: Choice['framing']): Choice => ({
  framing,
  style: 'warm',
  complexityHandling: 'chunked',
  encouragement: 'moderate',
});
const framingCell = (complexity: number, framing: Choice['framing']) =>
  cellIndex(complexity, DIMENSION_OFFSET.framing + FRAMINGS.indexOf(framing));
const zeros4 = () => new Float64Array(D);

/** An observation of `framing` shown with probability p (other dimensions certain), credited the whole reward. */
function observation(
  complexity: number,
  framing: Choice['framing'],
  p: number,
  reward: number,
  extra: Partial<PopulationObservation> = {},
): PopulationObservation {
  const slots = choiceSlots(choice(framing));
  return {
    offsets: [0, 0, 0],
    complexity,
    cells: DIMENSION_NAMES.map((dim) => cellIndex(complexity, slots[dim])),
    probabilities: [p, 1, 1, 1],
    reward,
    credited: [reward, reward, reward, reward],
    error: 0,
    userWeight: zeros4(),
    follower: zeros4(),
    favS: zeros4(),
    favN: zeros4(),
    otherS: zeros4(),
    otherN: zeros4(),
    contrastExcess: zeros4(),
    contrastScale: zeros4(),
    typedWeight: 0,
    neutralLogBayes: 0,
    ...extra,
  };
}

/** One batch (delta) merged like the worker does. */
function observeBatch(prior: PopulationPrior, items: PopulationObservation[]): PopulationPrior {
  const delta = emptyPopulation();
  for (const item of items) observePopulation(delta, { ...item, offsets: compilePopulation(prior).offsets });
  return mergePopulation(prior, delta);
}

/** Users choosing framings uniformly at random (p = 1/5), most of whom like `favourite` at `complexity`. */
function uniformlyLogged(complexity: number, favourite: Choice['framing'], random: Random, users = 150): PopulationPrior {
  let prior = emptyPopulation();
  for (let user = 0; user < users; user++) {
    const liked = random() < 0.8 ? favourite : FRAMINGS[Math.floor(random() * FRAMINGS.length)]!;
    prior = observeBatch(
      prior,
      Array.from({ length: 6 }, () => {
        const framing = FRAMINGS[Math.floor(random() * FRAMINGS.length)]!;
        return observation(complexity, framing, 0.2, framing === liked ? 0.85 : 0.25);
      }),
    );
  }
  return prior;
}

/**
 * The framing's EM level sums and credited-reward moments of 1,000 outcomes at a favourite and
 * 1,000 at other values (credited reward sum 1,000 over the 2,000).
 */
function setFramingSums(prior: PopulationPrior, sums: { favS: number; otherS: number; rs2: number }): void {
  prior.favouriteLevelSum[0] = sums.favS;
  prior.favouriteLevelWeight[0] = 1000;
  prior.otherLevelSum[0] = sums.otherS;
  prior.otherLevelWeight[0] = 1000;
  prior.creditedSum[0] = 1000;
  prior.creditedSquares[0] = sums.rs2;
  prior.creditedCount[0] = 2000;
}

describe('observePopulation', () => {
  it('counts an outcome once per dimension, weighted by 1/p capped at MAX_WEIGHT, with the reward credited to each value', () => {
    const delta = emptyPopulation();
    const prior = compilePopulation(emptyPopulation());
    observePopulation(delta, { ...observation(LOW, 'purpose', 0.5, 0.8, { credited: [0.7, 0.6, 0.5, 0.4] }), offsets: prior.offsets });
    observePopulation(delta, { ...observation(LOW, 'purpose', 0.01, 0.2, { credited: [0.1, 0.2, 0.3, 0.4] }), offsets: prior.offsets });
    const cell = framingCell(LOW, 'purpose');
    expect(delta.outcomeCount).toBe(2);
    expect(delta.shownCount[cell]).toBe(2);
    expect(delta.rewardSum[cell]).toBeCloseTo(1.0, 12);
    expect(delta.ipsWeight[cell]).toBeCloseTo(2 + MAX_WEIGHT, 12);
    expect(delta.ipsCreditedSum[cell]).toBeCloseTo(2 * 0.7 + MAX_WEIGHT * 0.1, 12);
    expect(delta.ipsWeightSquares[cell]).toBeCloseTo(4 + MAX_WEIGHT ** 2, 12);
    const warm = cellIndex(LOW, DIMENSION_OFFSET.style + 1);
    expect(delta.ipsWeight[warm]).toBe(2); // chosen with certainty: weight 1
    expect(delta.ipsCreditedSum[warm]).toBeCloseTo(0.6 + 0.2, 12);
    expect(delta.complexityRewardSum[LOW]).toBeCloseTo(1.0, 12);
    expect(delta.complexityCount).toEqual([2, 0, 0]);
    expect(delta.shownCount.reduce((s, x) => s + x, 0)).toBe(2 * D);
  });

  it('adds the user’s EM summaries and the prediction error as given', () => {
    const delta = emptyPopulation();
    const em = {
      userWeight: Float64Array.from([0.5, 0.4, 0.3, 0.2]),
      follower: Float64Array.from([0.9, 0.8, 0.7, 0.6]),
      favS: Float64Array.from([0.1, 0.2, 0.3, 0.4]),
      favN: Float64Array.from([0.2, 0.2, 0.2, 0.2]),
      otherS: Float64Array.from([0.3, 0.3, 0.3, 0.3]),
      otherN: Float64Array.from([0.8, 0.8, 0.8, 0.8]),
    };
    observePopulation(delta, {
      ...observation(LOW, 'curiosity', 1, 0.5, { ...em, error: -0.25 }),
      offsets: compilePopulation(emptyPopulation()).offsets,
    });
    expect(delta.userWeight).toEqual([0.5, 0.4, 0.3, 0.2]);
    delta.followerSum.forEach((x, d) => expect(x).toBeCloseTo(em.userWeight[d]! * em.follower[d]!, 12));
    expect(delta.favouriteLevelSum).toEqual([0.1, 0.2, 0.3, 0.4]);
    expect(delta.otherLevelWeight).toEqual([0.8, 0.8, 0.8, 0.8]);
    expect([delta.predictionErrorSum, delta.predictionErrorSquares, delta.predictionErrorCount]).toEqual([-0.25, 0.0625, 1]);
  });
});

describe('mergePopulation', () => {
  it('decays the old prior by POPULATION_DECAY^events (Σ weight² by its square), adds the delta, and changes neither input', () => {
    const random = seededRandom(5);
    const prior = uniformlyLogged(LOW, 'purpose', random, 20);
    const delta = emptyPopulation();
    for (let i = 0; i < 40; i++)
      observePopulation(delta, {
        ...observation(i % COMPLEXITY_COUNT, FRAMINGS[i % 5]!, 0.25, random()),
        offsets: compilePopulation(prior).offsets,
      });
    const priorCopy = structuredClone(prior);
    const deltaCopy = structuredClone(delta);
    const merged = mergePopulation(prior, delta);
    expect(prior).toEqual(priorCopy);
    expect(delta).toEqual(deltaCopy);
    const factor = POPULATION_DECAY ** 40;
    // Stored to 7 significant digits.
    const close = (x: number, exact: number) => expect(Math.abs(x - exact)).toBeLessThanOrEqual(5e-7 * Math.abs(exact) + 1e-15);
    close(merged.outcomeCount, prior.outcomeCount * factor + 40);
    for (const key of [
      'shownCount',
      'rewardSum',
      'ipsWeight',
      'ipsCreditedSum',
      'complexityRewardSum',
      'complexityCount',
      'followerSum',
      'userWeight',
      'favouriteLevelSum',
      'creditedSum',
      'creditedSquares',
      'creditedCount',
    ] as const) {
      merged[key].forEach((x, i) => close(x, prior[key][i]! * factor + delta[key][i]!));
    }
    for (const key of ['predictionErrorSum', 'predictionErrorSquares', 'predictionErrorCount'] as const)
      close(merged[key], prior[key] * factor + delta[key]);
    merged.ipsWeightSquares.forEach((x, i) => close(x, prior.ipsWeightSquares[i]! * factor ** 2 + delta.ipsWeightSquares[i]!));
  });

  it('decays a small sum one outcome at a time as in one batch: the prior does not depend on how the worker batched', () => {
    const cell = framingCell(LOW, 'purpose');
    // One outcome long ago: its inverse-propensity weight (capped at 3) decayed below 0.25.
    const start = mergePopulation(observeBatch(emptyPopulation(), [observation(LOW, 'purpose', 0.25, 0.1)]), {
      ...emptyPopulation(),
      outcomeCount: 13_000,
    });
    expect(start.ipsWeight[cell]).toBeLessThan(0.25); // fixed 4-decimal rounding never decayed sums this small
    const oneEvent = { ...emptyPopulation(), outcomeCount: 1 };
    let stepwise = start;
    for (let i = 0; i < 3000; i++) stepwise = mergePopulation(stepwise, oneEvent);
    const batched = mergePopulation(start, { ...emptyPopulation(), outcomeCount: 3000 });
    expect(Math.abs(batched.ipsWeight[cell]! / (start.ipsWeight[cell]! * POPULATION_DECAY ** 3000) - 1)).toBeLessThan(1e-6);
    expect(Math.abs(stepwise.ipsWeight[cell]! / batched.ipsWeight[cell]! - 1)).toBeLessThan(1e-4);
    expect(
      Math.abs(stepwise.ipsCreditedSum[cell]! / stepwise.ipsWeight[cell]! - start.ipsCreditedSum[cell]! / start.ipsWeight[cell]!),
    ).toBeLessThan(1e-4); // its mean stays put
  });

  it('forgets old evidence with a memory of about 1/(1 − POPULATION_DECAY) outcomes', () => {
    const cell = framingCell(LOW, 'purpose');
    let prior = observeBatch(emptyPopulation(), [observation(LOW, 'purpose', 1, 1)]);
    for (let batch = 0; batch < 10; batch++) {
      prior = observeBatch(
        prior,
        Array.from({ length: 500 }, () => observation(2, 'challenge', 1, 0.5)),
      );
    }
    expect(prior.ipsWeight[cell]).toBeCloseTo(POPULATION_DECAY ** 5000, 3); // ≈ e^(−1)
  });
});

describe('compilePopulation', () => {
  it('makes the value most users succeed with the likely population best at its complexity, and populationBest picks it', () => {
    const prior = uniformlyLogged(LOW, 'purpose', seededRandom(2));
    const compiled = compilePopulation(prior);
    const framing = compiled.dimensions[0]!;
    let sum = 0;
    for (const f of FRAMINGS) sum += framing.popBest[framingCell(LOW, f)]!;
    expect(sum).toBeCloseTo(1, 3);
    expect(framing.popBest[framingCell(LOW, 'purpose')]).toBeGreaterThan(0.99);
    expect(engine.populationBest(compiled, { taskComplexity: 'low' }).framing).toBe('purpose');
    // Nothing was learned at the other complexities: every framing is as likely as any other.
    for (const f of FRAMINGS) expect(framing.popBest[framingCell(2, f)]).toBeCloseTo(1 / 5, 2);
  });

  it('shrinks each mean toward the reliability-weighted average of its dimension’s tried values by MEAN_SHRINK outcomes of effective sample size', () => {
    const prior = observeBatch(emptyPopulation(), [
      observation(LOW, 'purpose', 1, 1),
      observation(LOW, 'purpose', 1, 1),
      observation(LOW, 'challenge', 0.1, 0.2),
    ]);
    const compiled = compilePopulation(prior);
    const meanOf = (framing: Choice['framing']) =>
      prior.ipsCreditedSum[framingCell(LOW, framing)]! / prior.ipsWeight[framingCell(LOW, framing)]!;
    // Each tried value counts by its reliability e/(e + MEAN_SHRINK) (e: effective size), not by its
    // outcomes: an untried value is expected to earn what a typical value does, not what the
    // most-shown one does.
    const reliability = (e: number) => e / (e + MEAN_SHRINK);
    const dimMean = (reliability(2) * meanOf('purpose') + reliability(1) * meanOf('challenge')) / (reliability(2) + reliability(1));
    // purpose: two outcomes of weight 1 (effective size 2); challenge: one of weight MAX_WEIGHT (effective size 1).
    expect(compiled.mean[framingCell(LOW, 'purpose')]).toBeCloseTo((2 * 1 + MEAN_SHRINK * dimMean) / (2 + MEAN_SHRINK), 3);
    expect(compiled.mean[framingCell(LOW, 'challenge')]).toBeCloseTo((1 * 0.2 + MEAN_SHRINK * dimMean) / (1 + MEAN_SHRINK), 3);
    expect(compiled.mean[framingCell(LOW, 'curiosity')]).toBeCloseTo(dimMean, 3);
  });

  it('does not expect an untried value to rival a clear favourite in a young tenant', () => {
    // 70 outcomes: micro_steps nearly always shown and liked; two other framings tried once each
    // and disliked; two never tried. An untried framing is a typical framing, not the favourite.
    const prior = observeBatch(emptyPopulation(), [
      ...Array.from({ length: 68 }, () => observation(LOW, 'micro_steps', 0.9, 0.98)),
      observation(LOW, 'challenge', 0.05, 0.1),
      observation(LOW, 'purpose', 0.05, 0.1),
    ]);
    const { popBest, offset } = compilePopulation(prior).dimensions[0]!;
    expect(popBest[cellIndex(LOW, offset)]).toBeGreaterThan(0.9);
    for (const untried of ['time_boxed', 'curiosity'] as const)
      expect(popBest[cellIndex(LOW, offset + FRAMINGS.indexOf(untried))]).toBeLessThan(0.05);
  });

  it('is less sure of the best value when it rests on fewer outcomes', () => {
    const few = compilePopulation(uniformlyLogged(LOW, 'purpose', seededRandom(8), 4));
    const many = compilePopulation(uniformlyLogged(LOW, 'purpose', seededRandom(8), 150));
    const cell = framingCell(LOW, 'purpose');
    expect(few.dimensions[0]!.popBest[cell]).toBeLessThan(many.dimensions[0]!.popBest[cell]!);
    expect(few.dimensions[0]!.popBest[cell]).toBeGreaterThan(1 / 5);
  });

  it('is never sure of a best value that leads by less than MEAN_BIAS, however many outcomes it rests on', () => {
    // 10,000 outcomes, framings shown uniformly: purpose always earns 0.505, challenge 0.500,
    // the others 0.2. Sampling error alone (≈ 0.003 per mean) would make purpose the best with
    // probability ≈ 0.86; each mean's error is at least MEAN_BIAS = 0.01, so a lead of 0.005 is
    // worth ≈ 0.63.
    const earns = { purpose: 0.505, challenge: 0.5 } as Partial<Record<Choice['framing'], number>>;
    const prior = observeBatch(
      emptyPopulation(),
      Array.from({ length: 10_000 }, (_, i) => {
        const framing = FRAMINGS[i % FRAMINGS.length]!;
        return observation(LOW, framing, 0.2, earns[framing] ?? 0.2);
      }),
    );
    expect(MEAN_BIAS).toBe(0.01);
    const { popBest } = compilePopulation(prior).dimensions[0]!;
    const share = popBest[framingCell(LOW, 'purpose')]!;
    expect(share).toBeGreaterThan(0.5);
    expect(share).toBeLessThan(0.7);
    expect(share + popBest[framingCell(LOW, 'challenge')]!).toBeGreaterThan(0.99);
  });

  it('takes levels from the EM sums, pulled toward the defaults by a few pseudo-outcomes', () => {
    const empty = compilePopulation(emptyPopulation());
    DIMENSION_NAMES.forEach((dim, d) => {
      expect(empty.dimensions[d]!.follow).toBe(0.5);
      expect(empty.dimensions[d]!.step).toBeCloseTo(DEFAULT_STEP[dim], 12);
      expect(empty.dimensions[d]!.weight).toBeGreaterThan(0);
    });
    // Many users whose favourites earn 0.8 and other values 0.2, all following the population.
    const prior = emptyPopulation();
    setFramingSums(prior, { favS: 800, otherS: 200, rs2: 2000 * 0.34 });
    prior.followerSum[0] = 900;
    prior.userWeight[0] = 1000;
    const framing = compilePopulation(prior).dimensions[0]!;
    expect(framing.step).toBeCloseTo(0.6, 2);
    expect(framing.follow).toBeCloseTo(901 / 1002, 6);
    // The noise is what the levels leave of the variance: 0.34 − 0.25 − 0.6² · ¼ = 0.
    expect(framing.weight).toBeCloseTo(framing.step / 0.02, 1);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) expect(framing.mid[c]).toBeCloseTo(0.2 + 0.3, 1);
  });

  it('caps the prior strength: even when every user follows the population, a new user may have an own favourite', () => {
    const prior = emptyPopulation();
    prior.followerSum[0] = 1000;
    prior.userWeight[0] = 1000;
    const framing = compilePopulation(prior).dimensions[0]!;
    expect(framing.follow).toBe(MAX_FOLLOW);
    // Even with the population's best framing known for certain, a cold user's favourite is it
    // with probability MAX_FOLLOW + (1 − MAX_FOLLOW) / 5 = 0.96, not 1.
    const popBest = new Float64Array(CELL_COUNT);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) popBest[cellIndex(c, framing.offset)] = 1;
    const out = new Float64Array(CONTEXT_CELL_COUNT);
    const none = new Float64Array(CONTEXT_CELL_COUNT);
    favouritePosterior(
      { ...framing, popBest },
      { n: none, s: none, contexts: COMPLEXITY_COUNT },
      out,
      scratch.inference.posterior.favourite,
    );
    for (let c = 0; c < COMPLEXITY_COUNT; c++) expect(out[c * VALUE_COUNT + framing.offset]).toBeCloseTo(0.96, 6);
  });

  it('gives a dimension at least the lower confidence bound of its best value’s lead as its step, whatever EM says', () => {
    const prior = emptyPopulation();
    const f = DIMENSION_OFFSET.framing;
    // EM sums that put the framing's favourite level barely above the others…
    setFramingSums(prior, { favS: 500, otherS: 490, rs2: 2000 * 0.3 });
    // …while inverse-propensity means at every complexity show one framing 0.7 ahead of the rest.
    for (let c = 0; c < COMPLEXITY_COUNT; c++)
      FRAMINGS.forEach((_, i) => {
        const cell = cellIndex(c, f + i);
        prior.ipsWeight[cell] = 1000;
        prior.ipsWeightSquares[cell] = 1000;
        prior.ipsCreditedSum[cell] = i === 1 ? 800 : 100;
      });
    const framing = compilePopulation(prior).dimensions[0]!;
    const variance = 0.3 - 0.5 * 0.5;
    const bound = 0.7 - 2 * Math.sqrt(variance / 1000 + variance / 4000);
    expect(framing.step).toBeCloseTo(bound, 6);
  });

  it('credits a tenant’s framing effect to the framing even when every user is shown the same values of all four dimensions', () => {
    // Every user likes `purpose` and nothing else matters, so every user ends up shown the same
    // style, complexity handling and encouragement with it. Without the lead bound, EM handed
    // the framing's effect to another dimension on 3 of 8 such seeded runs, and a user who
    // liked another framing was never served it; seeds 1 and 3 are two of those.
    for (const seed of [1, 3]) {
      const random = seededRandom(seed);
      const prior = unanimousTenant(random, 100);
      const [framing, ...others] = prior.dimensions;
      expect(framing!.step).toBeGreaterThan(0.4);
      for (const other of others) expect(other.step).toBeLessThan(framing!.step / 4);
      // A newcomer who likes `curiosity` instead is found: at least 8 of interactions 21–30 use it.
      let state = engine.initialState(prior);
      let hits = 0;
      for (let i = 0; i < 30; i++) {
        const context = { taskComplexity: TASK_COMPLEXITY[i % 3]! };
        const { choice } = engine.decide(state, { context, pins: {}, random }, prior);
        const reward = choice.framing === 'curiosity' ? 0.8 : 0.2 * random();
        if (i >= 20 && choice.framing === 'curiosity') hits++;
        state = engine.update(state, { context, choice, reward, started: reward > 0.5 }, prior);
      }
      expect(hits).toBeGreaterThanOrEqual(8);
    }
  }, 60_000);

  it('gives each complexity its reward level, once it has a few outcomes', () => {
    const prior = observeBatch(emptyPopulation(), [
      ...Array.from({ length: 10 }, () => observation(0, 'purpose', 1, 0.9)),
      ...Array.from({ length: 10 }, () => observation(2, 'purpose', 1, 0.3)),
      observation(1, 'purpose', 1, 0.6),
    ]);
    const { offsets } = compilePopulation(prior);
    const overall = (9 + 3 + 0.6) / 21;
    expect(offsets[0]).toBeCloseTo(0.9 - overall, 4);
    expect(offsets[2]).toBeCloseTo(0.3 - overall, 4);
    expect(offsets[1]).toBe(0); // one outcome is not enough
  });

  it('derives the spread of prediction errors from the observed errors', () => {
    const items = Array.from({ length: 30 }, (_, i) => observation(LOW, 'purpose', 1, 0.5, { error: i % 2 === 0 ? 0.3 : -0.3 }));
    const prior = observeBatch(emptyPopulation(), items);
    expect(compilePopulation(prior).predictionSd).toBeCloseTo(0.3, 3);
    expect(compilePopulation(emptyPopulation()).predictionSd).toBeGreaterThan(0.3); // a wide default before there are any
  });

  it('keeps the sums it was compiled from, unchanged: what is stored and merged', () => {
    const prior = uniformlyLogged(LOW, 'purpose', seededRandom(3), 5);
    const copy = structuredClone(prior);
    expect(compilePopulation(prior).sums).toBe(prior);
    expect(prior).toEqual(copy);
  });
});

describe('parsePopulation', () => {
  it('returns an empty prior for anything that is not a prior of today’s format, including those of earlier ones', () => {
    const v1 = { format: 'pop-v1', events: 3, w: new Array(CELL_COUNT).fill(1) };
    const { contrastExcess: _excess, contrastScale: _scale, ...withoutContrast } = emptyPopulation();
    const bad = [{ ...emptyPopulation(), shownCount: [1, 2] }, { ...emptyPopulation(), predictionErrorCount: null }, withoutContrast];
    for (const raw of [null, 7, 'x', {}, v1, ...bad]) {
      expect(parsePopulation(raw)).toEqual(emptyPopulation());
    }
  });

  it('round-trips a prior through JSON', () => {
    const prior = uniformlyLogged(LOW, 'purpose', seededRandom(4), 10);
    expect(parsePopulation(JSON.parse(JSON.stringify(prior)))).toEqual(prior);
  });
});

const USERS = 80;
const INTERACTIONS = 24;
/**
 * A tenant whose users each have their own favourite style (no population favourite) worth
 * `effect` of success probability; the framing `purpose` adds 0.3 for everyone.
 */
function personalStyleTenant(effect: number, seed = 11): CompiledPopulation {
  const random = seededRandom(seed);
  const favourites = Array.from({ length: USERS }, () => STYLES[Math.floor(random() * STYLES.length)]!);
  let served = 0;
  return trainedTenant(
    random,
    USERS,
    INTERACTIONS,
    (i) => ({ taskComplexity: TASK_COMPLEXITY[i % 3]! }),
    (shown, r) => {
      const user = Math.floor(served++ / INTERACTIONS);
      const p = 0.2 + (shown.framing === 'purpose' ? 0.3 : 0) + (shown.style === favourites[user] ? effect : 0);
      return r() < p ? 1 : 0;
    },
  );
}

describe('the step of a dimension whose favourites are personal', () => {
  const styleStep = (prior: CompiledPopulation) => prior.dimensions[DIMENSION_NAMES.indexOf('style')]!.step;

  it('is found from each user’s own contrasts between the values they were shown', () => {
    // Every user's posterior starts flat on the style, so the levels' EM alone sees next to no step.
    // (Without it, this tenant's style step reads about 0.18.)
    expect(styleStep(personalStyleTenant(0.4))).toBeGreaterThan(0.3);
  });

  it('is not raised where the dimension makes no difference', () => {
    // The levels' EM keeps it near the default step of a minor dimension here. One tenant's step
    // moves by ±0.06 with the seed (adaptive choices make a value that did badly early look worse), so six are averaged.
    const seeds = [1, 2, 3, 4, 5, 6];
    const mean = seeds.reduce((sum, seed) => sum + styleStep(personalStyleTenant(0, seed)), 0) / seeds.length;
    expect(mean).toBeLessThan(DEFAULT_STEP.style + 0.03); // 0.09
  });
});

describe('the follower share a decision explores under', () => {
  const STYLE = DIMENSION_NAMES.indexOf('style');

  const EVERYWHERE = [1, 1, 1];
  const NO_NOISE = [0, 0, 0];

  it('measures how sharply the population’s favourite is known: 1 when certain, 0 when every value is alike', () => {
    const model = compilePopulation(emptyPopulation()).dimensions[STYLE]!;
    const popBest = (shares: number[]) => {
      const cells = new Float64Array(CELL_COUNT);
      for (let c = 0; c < COMPLEXITY_COUNT; c++) shares.forEach((p, i) => (cells[cellIndex(c, model.offset + i)] = p));
      return { ...model, popBest: cells };
    };
    expect(popBestSharpness(popBest([1, 0, 0, 0]), EVERYWHERE, NO_NOISE)).toBeCloseTo(1, 12);
    expect(popBestSharpness(popBest([0.25, 0.25, 0.25, 0.25]), EVERYWHERE, NO_NOISE)).toBeCloseTo(0, 12);
    // (2 · 0.5² − 1/4) / (1 − 1/4)
    expect(popBestSharpness(popBest([0.5, 0.5, 0, 0]), EVERYWHERE, NO_NOISE)).toBeCloseTo(1 / 3, 12);
    // Weighted by the tenant's outcomes at each complexity: one without outcomes does not count.
    const lowOnly = popBest([1, 0, 0, 0]);
    for (let c = 1; c < COMPLEXITY_COUNT; c++) lowOnly.popBest.fill(0.25, cellIndex(c, model.offset), cellIndex(c, model.offset) + 4);
    expect(popBestSharpness(lowOnly, [10, 0, 0], NO_NOISE)).toBeCloseTo(1, 12);
    expect(popBestSharpness(lowOnly, [10, 10, 20], NO_NOISE)).toBeCloseTo(0.25, 12);
    expect(popBestSharpness(lowOnly, [0, 0, 0], NO_NOISE)).toBe(0);
  });

  it('counts only the sharpness beyond what noise alone would show', () => {
    const model = compilePopulation(emptyPopulation()).dimensions[STYLE]!;
    const cells = new Float64Array(CELL_COUNT);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) [0.5, 0.5, 0, 0].forEach((p, i) => (cells[cellIndex(c, model.offset + i)] = p));
    const halves = { ...model, popBest: cells };
    // Sharpness 1/3 everywhere: (1/3 − 0.2) / (1 − 0.2) beyond noise of 0.2, the noise averaged by outcomes.
    expect(popBestSharpness(halves, EVERYWHERE, [0.2, 0.2, 0.2])).toBeCloseTo((1 / 3 - 0.2) / 0.8, 12);
    expect(popBestSharpness(halves, [1, 1, 2], [0.4, 0.2, 0.1])).toBeCloseTo((1 / 3 - 0.2) / 0.8, 12);
    expect(popBestSharpness(halves, EVERYWHERE, [0.4, 1 / 3, 0.3])).toBe(0);
  });

  it('is none where the population’s favourite looks no sharper than noise makes it', () => {
    // The style makes no difference: popBest's differences are noise, yet they look somewhat known.
    const compiled = personalStyleTenant(0, 1);
    const model = compiled.dimensions[STYLE]!;
    const noise = compiled.popBestNoise[STYLE]!;
    noise.forEach((s0) => expect(s0).toBeGreaterThan(0.2));
    expect(popBestSharpness(model, compiled.outcomes, NO_NOISE)).toBeGreaterThan(0.1);
    expect(popBestSharpness(model, compiled.outcomes, noise)).toBe(0);
    expect(model.follow).toBeGreaterThan(0.5);
    expect(compiled.choosing.dimensions[STYLE]!.follow).toBe(0);
  });

  it('is the learned share where the population’s favourite is known', () => {
    const compiled = unanimousTenant(seededRandom(5), 40);
    expect(popBestSharpness(compiled.dimensions[0]!, compiled.outcomes, compiled.popBestNoise[0]!)).toBeGreaterThan(0.9);
    expect(compiled.choosing.dimensions[0]!.follow).toBe(compiled.dimensions[0]!.follow);
  });

  it('lets a decision choose by the beliefs themselves where every share is the learned one', () => {
    // Every user likes the same value of each of the four dimensions.
    const liked: Choice = { framing: 'purpose', style: 'warm', complexityHandling: 'chunked', encouragement: 'moderate' };
    const prior = trainedTenant(
      seededRandom(6),
      40,
      20,
      (i) => ({ taskComplexity: TASK_COMPLEXITY[i % 3]! }),
      (shown, r) => (r() < 0.1 + DIMENSION_NAMES.reduce((p, dim) => p + (shown[dim] === liked[dim] ? 0.2 : 0), 0) ? 1 : 0),
    );
    const compiled = prior;
    expect(compiled.choosing.dimensions).toBe(compiled.dimensions);
    const inference = inferenceOf(engine.initialState(prior), compiled);
    expect(choosingBeliefs(inference, scratch.inference.posterior)).toBe(inference.beliefs);
  });

  it('is none in a tenant without outcomes', () => {
    const compiled = compilePopulation(emptyPopulation());
    compiled.dimensions.forEach((model, d) => {
      expect(popBestSharpness(model, compiled.outcomes, compiled.popBestNoise[d]!)).toBe(0);
      expect(compiled.choosing.dimensions[d]!.follow).toBeLessThan(1e-3);
    });
  });

  it('is φ · s / KNOWN_SHARPNESS in between', () => {
    const model = { ...compilePopulation(emptyPopulation()).dimensions[STYLE]!, follow: 0.6 };
    const cells = new Float64Array(CELL_COUNT);
    for (let c = 0; c < COMPLEXITY_COUNT; c++) [0.5, 0.5, 0, 0].forEach((p, i) => (cells[cellIndex(c, model.offset + i)] = p));
    // Sharpness 1/3 against noise of 0.3: s = (1/3 − 0.3) / 0.7, below KNOWN_SHARPNESS.
    const s = (1 / 3 - 0.3) / 0.7;
    expect(s).toBeLessThan(KNOWN_SHARPNESS);
    expect(choosingShare({ ...model, popBest: cells }, EVERYWHERE, [0.3, 0.3, 0.3])).toBeCloseTo((0.6 * s) / KNOWN_SHARPNESS, 12);
  });

  it('leaves the decision’s models otherwise the same as the beliefs’', () => {
    // (With task-type evidence that most users' favourites ignore their task types.)
    const trained = personalStyleTenant(0.2);
    const compiled = compilePopulation({ ...trained.sums, neutralLogLikelihood: NEUTRAL_GRID.map((share) => -100 * (share - 0.9) ** 2) });
    compiled.dimensions.forEach((model, d) =>
      expect(compiled.choosing.dimensions[d]).toEqual({
        ...model,
        follow: choosingShare(model, compiled.outcomes, compiled.popBestNoise[d]!),
      }),
    );
    expect(compiled.choosing.typeNeutralLogit).toBe(compiled.typeNeutralLogit);
    expect(compiled.typeNeutralLogit).not.toBe(0);
  });

  it('gives a user without outcomes the tenant’s decision posterior, computed once per prior', () => {
    const prior = personalStyleTenant(0.4);
    const compiled = prior;
    const inference = inferenceOf(engine.initialState(prior), compiled);
    const expected = new Float64Array(BELIEF_CELL_COUNT);
    const none = new Float64Array(CONTEXT_CELL_COUNT);
    userPosterior(
      compiled.choosing,
      { n: none, s: none, contexts: inference.contexts },
      { favourite: expected.subarray(0, CONTEXT_CELL_COUNT), follower: new Float64Array(D) },
      scratch.inference.posterior,
    );
    fillUnknownContexts(expected, inference.shares, inference.contexts);
    expect(Array.from(choosingBeliefs(inference, scratch.inference.posterior))).toEqual(Array.from(expected));
  });

  it('computes a decision’s posterior with the inference for a decision, bit for bit as it would apart', () => {
    const prior = personalStyleTenant(0.4);
    expect(prior.choosing.dimensions).not.toBe(prior.dimensions);
    const random = seededRandom(12);
    // Users with and without task types, with and without outcomes of unknown complexity, and a new user.
    const users = [0, 1, 2].map((kind) => {
      let state = engine.initialState(prior);
      for (let i = 0; i < 5 + 30 * kind; i++) {
        const context = {
          ...(kind === 2 && i % 4 === 0 ? {} : { taskComplexity: TASK_COMPLEXITY[i % 3]! }),
          ...(kind > 0 ? { taskType: ['email', 'report', ''][i % 3]! } : {}),
        };
        const decision = engine.decide(state, { context, pins: {}, random }, prior);
        const reward = random() < (decision.choice.style === 'structured' ? 0.8 : 0.3) ? 1 : 0;
        state = engine.update(state, { context, choice: decision.choice, reward, started: reward > 0 }, prior);
      }
      return state;
    });
    for (const state of [engine.initialState(prior), ...users]) {
      const start = priorBeliefs(prior, COMPLEXITY_COUNT * (1 + state.taskTypes.length), scratch.inference.posterior);
      const apart = inferUser(state, prior, start, scratch.inference);
      expect(apart.choosing).toBeNull();
      const together = inferUser(state, prior, start, scratch.inference, true);
      expect(Array.from(together.choosing!)).toEqual(Array.from(choosingBeliefs(apart, scratch.inference.posterior)));
      expect(Array.from(together.beliefs)).toEqual(Array.from(apart.beliefs));
      expect(Array.from(together.follower)).toEqual(Array.from(apart.follower));
      expect(together.neutralLogBayes).toBe(apart.neutralLogBayes);
    }
  });

  it('makes a decision lean toward the user’s own favourite, while its confidence and exploration stay the beliefs’', () => {
    // A tenant whose population favourite of the style is no sharper than noise.
    const prior = personalStyleTenant(0.4, 15);
    const compiled = prior;
    // A user shown three styles at low complexity, who did well only with `structured`.
    let state = engine.initialState(prior);
    for (const style of ['direct', 'warm', 'structured'] as const) {
      const reward = style === 'structured' ? 0.9 : 0.1;
      state = engine.update(
        state,
        { context: { taskComplexity: 'low' }, choice: { ...choice('purpose'), style }, reward, started: reward > 0.5 },
        prior,
      );
    }
    const inference = inferenceOf(state, compiled);
    const first = 2 * VALUE_COUNT + DIMENSION_OFFSET.style; // high complexity
    const beliefs = STYLES.map((_, v) => inference.beliefs[first + v]!);
    const leaning = Array.from(choosingBeliefs(inference, scratch.inference.posterior).subarray(first, first + STYLES.length));
    // Where the user has shown nothing, their own favourite carries over: more so for a decision,
    // enough to make it the decision's most probable style while the beliefs still put another first.
    const structured = STYLES.indexOf('structured');
    expect(leaning[structured]!).toBeGreaterThan(beliefs[structured]!);
    expect(argmax(leaning, 0, STYLES.length)).toBe(structured);
    expect(argmax(beliefs, 0, STYLES.length)).not.toBe(structured);
    const pins = { framing: 'purpose', complexityHandling: 'chunked', encouragement: 'moderate' } as const;
    const kappa = sharpness(historyLength(state.history));
    const weights = leaning.map((p) => p ** kappa);
    const total = weights.reduce((sum, w) => sum + w, 0);
    let drawnStructured = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const decision = engine.decide(state, { context: { taskComplexity: 'high' }, pins, random: seededRandom(seed) }, prior);
      const v = STYLES.indexOf(decision.choice.style);
      if (v === structured) drawnStructured++;
      expect(decision.probabilities.style).toBeCloseTo(weights[v]! / total, 12);
      expect(decision.confidence).toBeCloseTo(beliefs[v]!, 12);
      expect(decision.explored.includes('style')).toBe(beliefs[v]! < Math.max(...beliefs));
    }
    // Drawn as the decision's favourite, `structured` is still exploration by the beliefs.
    expect(drawnStructured).toBeGreaterThan(0);
  });
});
