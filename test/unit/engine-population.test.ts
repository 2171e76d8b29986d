import { FRAMINGS, type Choice } from '../../shared/domain/arms';
import { engine } from '../../shared/domain/engine/engine';
import { CELL_COUNT, COMPLEXITY_COUNT, DIMENSION_OFFSET, cellIndex, choiceSlots, zeros } from '../../shared/domain/engine/layout';
import {
  MAX_WEIGHT,
  MEAN_SHRINK,
  POPULATION_DECAY,
  PRIOR_CAP,
  compilePopulation,
  emptyPopulation,
  levelWeights,
  mergePopulation,
  observePopulation,
  parsePopulation,
  type PopulationPrior,
} from '../../shared/domain/engine/population';
import type { SelectionProbabilities } from '../../shared/domain/learner';
import { seededRandom, type Random } from '../../shared/domain/random';

const LOW = 0;
const MEDIUM = 1;
const slotOfFraming = (framing: Choice['framing']) => DIMENSION_OFFSET.framing + FRAMINGS.indexOf(framing);
const choice = (framing: Choice['framing']): Choice => ({ framing, style: 'warm', complexity: 'chunked', encouragement: 'moderate' });
const noEvidence = { n: zeros(CELL_COUNT), s: zeros(CELL_COUNT) };
const certain: SelectionProbabilities = { framing: 1, style: 1, complexity: 1, encouragement: 1 };

/** One batch (delta) per user, merged like the worker does. */
function observeBatch(prior: PopulationPrior, items: Array<{ complexity: number; choice: Choice; p: number; reward: number }>) {
  const delta = emptyPopulation();
  for (const { complexity, choice: c, p, reward } of items) {
    observePopulation(delta, prior, noEvidence, complexity, choiceSlots(c), { ...certain, framing: p }, reward);
  }
  return mergePopulation(prior, delta);
}

/** Users choosing framings uniformly at random (p = 1/5), most of whom like `favourite` at `complexity`. */
function uniformlyLogged(complexity: number, favourite: Choice['framing'], random: Random, prior = emptyPopulation()): PopulationPrior {
  for (let user = 0; user < 150; user++) {
    const liked = random() < 0.8 ? favourite : FRAMINGS[Math.floor(random() * FRAMINGS.length)]!;
    const items = Array.from({ length: 6 }, () => {
      const framing = FRAMINGS[Math.floor(random() * FRAMINGS.length)]!;
      return { complexity, choice: choice(framing), p: 0.2, reward: framing === liked ? 0.85 : 0.25 };
    });
    prior = observeBatch(prior, items);
  }
  return prior;
}

describe('observePopulation', () => {
  it('weights an outcome (and its moments) by 1/p, capped at MAX_WEIGHT, and counts it once per dimension', () => {
    const delta = emptyPopulation();
    const c = choice('purpose');
    const probabilities: SelectionProbabilities = { framing: 0.5, style: 0.01, complexity: 1, encouragement: 0.2 };
    observePopulation(delta, emptyPopulation(), noEvidence, MEDIUM, choiceSlots(c), probabilities, 0.6);
    const slots = choiceSlots(c);
    const expected = { framing: 2, style: MAX_WEIGHT, complexity: 1, encouragement: 5 };
    expect(delta.events).toBe(1);
    for (const dim of ['framing', 'style', 'complexity', 'encouragement'] as const) {
      const cell = cellIndex(MEDIUM, slots[dim]);
      expect(delta.w[cell]).toBeCloseTo(expected[dim], 12);
      expect(delta.wr[cell]).toBeCloseTo(expected[dim] * 0.6, 12);
      expect(delta.n[cell]).toBe(1);
      // Moments carry the outcome's weight too; the residual is from the empty prior's mean.
      expect(delta.spread[2 * cell]).toBeCloseTo(expected[dim] * (0.6 - 0.5) ** 2, 12);
      expect(delta.spread[2 * cell + 1]).toBeCloseTo(expected[dim], 12);
    }
    // Nothing else is touched: 4 cells, and no moments between users without earlier evidence.
    expect(delta.n.filter((x) => x !== 0)).toHaveLength(4);
    expect(delta.same.every((x) => x === 0)).toBe(true);
    expect(delta.cross.every((x) => x === 0)).toBe(true);
  });

  it('records between-user moments against the user’s earlier mean, around the user’s level: same complexity in `same`, others in `cross`', () => {
    const slot = slotOfFraming('purpose');
    const other = slotOfFraming('curiosity');
    const user = { n: zeros(CELL_COUNT), s: zeros(CELL_COUNT) };
    user.n[cellIndex(LOW, slot)] = 2;
    user.s[cellIndex(LOW, slot)] = 1.6; // earlier mean 0.8
    user.n[cellIndex(LOW, other)] = 2;
    user.s[cellIndex(LOW, other)] = 0.2; // earlier mean 0.1 → the user's level at LOW: (0.3 − 0.4) / 2 = −0.05
    user.n[cellIndex(2, slot)] = 1;
    user.s[cellIndex(2, slot)] = 0.2; // earlier mean 0.2
    user.n[cellIndex(2, other)] = 1;
    user.s[cellIndex(2, other)] = 1; // earlier mean 1 → level at high complexity: (−0.3 + 0.5) / 2 = 0.1
    user.n[cellIndex(MEDIUM, slot)] = 0.3; // below 0.5: too little to use
    user.s[cellIndex(MEDIUM, slot)] = 0.3;
    const delta = emptyPopulation();
    observePopulation(delta, emptyPopulation(), user, LOW, choiceSlots(choice('purpose')), certain, 0.9);
    const cell = cellIndex(LOW, slot);
    const residual = 0.9 - 0.5 + 0.05;
    expect(delta.same[2 * cell]).toBeCloseTo(residual * (0.8 - 0.5 + 0.05), 12);
    expect(delta.same[2 * cell + 1]).toBe(1);
    expect(delta.cross[2 * cell]).toBeCloseTo(residual * (0.2 - 0.5 - 0.1), 12);
    expect(delta.cross[2 * cell + 1]).toBe(1);
  });

  it('learns nothing about between-user spread from a user who tried a single value (the level explains it)', () => {
    const slot = slotOfFraming('purpose');
    const user = { n: zeros(CELL_COUNT), s: zeros(CELL_COUNT) };
    user.n[cellIndex(LOW, slot)] = 3;
    user.s[cellIndex(LOW, slot)] = 2.4;
    const delta = emptyPopulation();
    observePopulation(delta, emptyPopulation(), user, LOW, choiceSlots(choice('purpose')), certain, 0.9);
    expect(delta.same[2 * cellIndex(LOW, slot)]).toBeCloseTo(0, 12);
  });

  it('takes a dimension’s moments around the part of the user’s level that the other dimensions account for', () => {
    // A tenant where users differ in framing only: the framings' pooled between-user moment is
    // 0.03, the other dimensions' 0 (or negative).
    const prior = emptyPopulation();
    for (let c = 0; c < COMPLEXITY_COUNT; c++) {
      for (let slot = 0; slot < CELL_COUNT / COMPLEXITY_COUNT; slot++) {
        const cell = cellIndex(c, slot);
        const framing = slot < DIMENSION_OFFSET.style;
        prior.same[2 * cell] = (framing ? 0.03 : -0.001) * 20;
        prior.same[2 * cell + 1] = 20;
      }
    }
    expect(levelWeights(emptyPopulation())).toEqual({ framing: 1, style: 1, complexity: 1, encouragement: 1 });
    expect(levelWeights(prior)).toEqual({ framing: 0, style: 1, complexity: 1, encouragement: 1 });
    // The single-value user of the test above: their success with purpose now counts toward the
    // framings' between-user spread, while for the style they were shown it is still their level.
    const slot = slotOfFraming('purpose');
    const style = DIMENSION_OFFSET.style; // 'warm', the style every choice here uses
    const user = { n: zeros(CELL_COUNT), s: zeros(CELL_COUNT) };
    for (const s of [slot, style]) {
      user.n[cellIndex(LOW, s)] = 3;
      user.s[cellIndex(LOW, s)] = 2.4;
    }
    const delta = emptyPopulation();
    observePopulation(delta, prior, user, LOW, choiceSlots(choice('purpose')), certain, 0.9);
    const mean = compilePopulation(prior).mean;
    const framingCell = cellIndex(LOW, slot);
    const styleCell = cellIndex(LOW, style);
    expect(delta.same[2 * framingCell]).toBeCloseTo((0.9 - mean[framingCell]!) * (0.8 - mean[framingCell]!), 12);
    expect(delta.same[2 * framingCell]).toBeGreaterThan(0.1);
    expect(delta.same[2 * styleCell]).toBeCloseTo(0, 12);
  });
});

describe('mergePopulation', () => {
  it('decays the old prior by POPULATION_DECAY^events, adds the delta, and changes neither input', () => {
    const random = seededRandom(5);
    const prior = emptyPopulation();
    prior.events = 1234;
    for (const key of ['w', 'wr', 'n', 'w2', 'same', 'cross', 'spread'] as const) {
      prior[key] = prior[key]!.map(() => Math.round(random() * 1e4) / 100);
    }
    const delta = emptyPopulation();
    for (let i = 0; i < 40; i++) {
      const framing = FRAMINGS[i % FRAMINGS.length]!;
      observePopulation(
        delta,
        prior,
        noEvidence,
        i % COMPLEXITY_COUNT,
        choiceSlots(choice(framing)),
        { ...certain, framing: 0.25 },
        random(),
      );
    }
    const priorCopy = structuredClone(prior);
    const deltaCopy = structuredClone(delta);
    const merged = mergePopulation(prior, delta);
    expect(prior).toEqual(priorCopy);
    expect(delta).toEqual(deltaCopy);
    const factor = POPULATION_DECAY ** 40;
    expect(merged.events).toBeCloseTo(1234 * factor + 40, 3);
    for (const key of ['w', 'wr', 'n', 'same', 'cross', 'spread'] as const) {
      merged[key].forEach((x, i) => expect(Math.abs(x - (prior[key][i]! * factor + delta[key][i]!))).toBeLessThanOrEqual(5e-5 + 1e-12));
    }
    // Σ weight² decays as the square of each decayed weight.
    merged.w2!.forEach((x, i) => expect(Math.abs(x - (prior.w2![i]! * factor ** 2 + delta.w2![i]!))).toBeLessThanOrEqual(5e-5 + 1e-12));
  });

  it('merges a prior stored before Σ weight² existed as if each cell’s weights had been equal', () => {
    const stored = observeBatch(emptyPopulation(), [{ complexity: LOW, choice: choice('purpose'), p: 0.5, reward: 1 }]);
    const { w2: _dropped, ...legacy } = stored;
    const cell = cellIndex(LOW, slotOfFraming('purpose'));
    const merged = mergePopulation(parsePopulation(JSON.parse(JSON.stringify(legacy))), emptyPopulation());
    expect(merged.w2![cell]).toBeCloseTo(stored.w[cell]! ** 2 / stored.n[cell]!, 4);
  });

  it('forgets old evidence with a memory of about 1/(1 − POPULATION_DECAY) outcomes', () => {
    const old = observeBatch(emptyPopulation(), [{ complexity: LOW, choice: choice('purpose'), p: 1, reward: 1 }]);
    const cell = cellIndex(LOW, slotOfFraming('purpose'));
    let prior = old;
    for (let batch = 0; batch < 10; batch++) {
      prior = observeBatch(
        prior,
        Array.from({ length: 500 }, () => ({ complexity: 2, choice: choice('challenge'), p: 1, reward: 0.5 })),
      );
    }
    expect(prior.w[cell]).toBeCloseTo(POPULATION_DECAY ** 5000, 3); // ≈ e^(−1)
    let events = 1;
    for (let batch = 0; batch < 10; batch++) events = events * POPULATION_DECAY ** 500 + 500;
    expect(prior.events).toBeCloseTo(events, 3);
  });
});

describe('compilePopulation', () => {
  it('means are IPS-weighted and shrink by MEAN_SHRINK outcomes of effective sample size toward the dimension’s mean', () => {
    const prior = emptyPopulation();
    FRAMINGS.forEach((framing) => {
      const cell = cellIndex(LOW, slotOfFraming(framing));
      // purpose: 10 outcomes of weight 2 (effective size 10); the others: 4 outcomes of weight 1.25 (effective size 4).
      prior.w[cell] = framing === 'purpose' ? 20 : 5;
      prior.wr[cell] = framing === 'purpose' ? 18 : 1.5;
      prior.n[cell] = framing === 'purpose' ? 10 : 4;
      prior.w2![cell] = framing === 'purpose' ? 40 : 6.25;
    });
    const compiled = compilePopulation(prior);
    const dimMean = (18 + 4 * 1.5) / (20 + 4 * 5);
    const purpose = cellIndex(LOW, slotOfFraming('purpose'));
    const challenge = cellIndex(LOW, slotOfFraming('challenge'));
    expect(compiled.mean[purpose]).toBeCloseTo((10 * 0.9 + MEAN_SHRINK * dimMean) / (10 + MEAN_SHRINK), 12);
    expect(compiled.mean[challenge]).toBeCloseTo((4 * 0.3 + MEAN_SHRINK * dimMean) / (4 + MEAN_SHRINK), 12);
    // Shrunk: between the raw mean and the dimension mean.
    expect(compiled.mean[purpose]).toBeLessThan(0.9);
    expect(compiled.mean[purpose]).toBeGreaterThan(dimMean);
    expect(compiled.mean[challenge]).toBeGreaterThan(0.3);
    // The mean's uncertainty falls with the effective outcomes behind it.
    expect(compiled.meanVar[purpose]).toBeCloseTo(compiled.noise[purpose]! / (10 + MEAN_SHRINK), 12);
    expect(compiled.meanVar[challenge]).toBeCloseTo(compiled.noise[challenge]! / (4 + MEAN_SHRINK), 12);
    // Complexities without evidence keep the default mean for every value.
    for (const framing of FRAMINGS) expect(compiled.mean[cellIndex(MEDIUM, slotOfFraming(framing))]).toBe(0.5);
    // Compiled once per prior object.
    expect(compilePopulation(prior)).toBe(compiled);
  });

  it('a mean resting on a few heavily weighted outcomes is shrunk more and less certain than one with the same weight from many', () => {
    // The same total weight (20) and reward (0.9 per weight) at two complexities: 2 outcomes of weight 10 vs 20 of weight 1.
    const items = [
      ...Array.from({ length: 2 }, () => ({ complexity: LOW, choice: choice('purpose'), p: 1 / MAX_WEIGHT, reward: 0.9 })),
      ...Array.from({ length: 20 }, () => ({ complexity: MEDIUM, choice: choice('purpose'), p: 1, reward: 0.9 })),
      ...Array.from({ length: 20 }, () => ({ complexity: LOW, choice: choice('challenge'), p: 1, reward: 0.3 })),
      ...Array.from({ length: 20 }, () => ({ complexity: MEDIUM, choice: choice('challenge'), p: 1, reward: 0.3 })),
    ];
    const prior = observeBatch(emptyPopulation(), items);
    const few = cellIndex(LOW, slotOfFraming('purpose'));
    const many = cellIndex(MEDIUM, slotOfFraming('purpose'));
    expect(prior.w[few]).toBeCloseTo(prior.w[many]!, 12);
    const compiled = compilePopulation(prior);
    expect(compiled.mean[few]).toBeLessThan(compiled.mean[many]! - 0.05);
    expect(compiled.meanVar[few]! / compiled.noise[few]!).toBeCloseTo(1 / (2 + MEAN_SHRINK), 9);
    expect(compiled.meanVar[many]! / compiled.noise[many]!).toBeCloseTo(1 / (20 + MEAN_SHRINK), 9);
  });

  it('compiles a prior stored before Σ weight² existed as if each cell’s weights had been equal', () => {
    const prior = observeBatch(emptyPopulation(), [
      ...Array.from({ length: 6 }, () => ({ complexity: LOW, choice: choice('purpose'), p: 0.5, reward: 0.8 })),
      ...Array.from({ length: 6 }, () => ({ complexity: LOW, choice: choice('challenge'), p: 0.5, reward: 0.2 })),
    ]);
    const { w2: _dropped, ...legacy } = prior;
    const parsed = parsePopulation(JSON.parse(JSON.stringify(legacy)));
    expect(parsed.w2).toBeUndefined();
    expect(parsed.w).toEqual(prior.w);
    // Equal weights: the effective size is the count, so the stored and the legacy form compile alike.
    const [now, before] = [compilePopulation(prior), compilePopulation(parsed)];
    for (let cell = 0; cell < CELL_COUNT; cell++) {
      expect(before.mean[cell]).toBeCloseTo(now.mean[cell]!, 4);
      expect(before.meanVar[cell]).toBeCloseTo(now.meanVar[cell]!, 4);
    }
  });

  it('IPS undoes adaptive exposure: a value shown mostly to the users who like it is not overrated', () => {
    // Half the users like challenge (reward 0.9) and see it with p = 0.8; the other half (reward 0.1) with p = 0.2.
    const items: Array<{ complexity: number; choice: Choice; p: number; reward: number }> = [];
    for (let i = 0; i < 1000; i++) {
      const fan = i % 2 === 0;
      const shown = fan ? i % 10 !== 0 : i % 10 === 1; // 80% vs 20% of each group's outcomes
      if (shown) items.push({ complexity: LOW, choice: choice('challenge'), p: fan ? 0.8 : 0.2, reward: fan ? 0.9 : 0.1 });
      else items.push({ complexity: LOW, choice: choice('micro_steps'), p: fan ? 0.2 : 0.8, reward: 0.5 });
    }
    const compiled = compilePopulation(observeBatch(emptyPopulation(), items));
    const raw = (400 * 0.9 + 100 * 0.1) / 500;
    expect(raw).toBeCloseTo(0.74, 9);
    expect(compiled.mean[cellIndex(LOW, slotOfFraming('challenge'))]).toBeCloseTo(0.5, 2); // the population's true mean
  });

  it('gives the value most users succeed with the highest mean, and populationBest picks it per complexity', () => {
    const random = seededRandom(3);
    const prior = uniformlyLogged(MEDIUM, 'purpose', random, uniformlyLogged(LOW, 'challenge', random));
    const compiled = compilePopulation(prior);
    const meansAt = (c: number) => FRAMINGS.map((f) => compiled.mean[cellIndex(c, slotOfFraming(f))]!);
    expect(Math.max(...meansAt(LOW))).toBe(compiled.mean[cellIndex(LOW, slotOfFraming('challenge'))]);
    expect(Math.max(...meansAt(MEDIUM))).toBe(compiled.mean[cellIndex(MEDIUM, slotOfFraming('purpose'))]);
    expect(engine.populationBest(prior, { complexity: 'low' }).framing).toBe('challenge');
    expect(engine.populationBest(prior, { complexity: 'medium' }).framing).toBe('purpose');
  });

  it('keeps every cell’s spread at least noise/PRIOR_CAP, with positive complexity-level spread, for arbitrary moments', () => {
    const random = seededRandom(11);
    const violations: number[] = [];
    for (let trial = 0; trial < 30; trial++) {
      const prior = emptyPopulation();
      for (let cell = 0; cell < CELL_COUNT; cell++) {
        prior.w[cell] = random() * 50;
        prior.wr[cell] = prior.w[cell]! * random();
        prior.n[cell] = random() * 50;
        for (const moment of [prior.same, prior.cross, prior.spread]) {
          const count = random() < 0.3 ? random() * 20 : 30 + random() * 200; // some cells below MIN_MOMENTS
          moment[2 * cell] = count * (random() - 0.3) * 0.2; // negative moments too
          moment[2 * cell + 1] = count;
        }
      }
      const compiled = compilePopulation(prior);
      for (let cell = 0; cell < CELL_COUNT; cell++) {
        const noise = compiled.noise[cell]!;
        const total = compiled.userVar[cell]! + compiled.contextVar[cell]!;
        if (!(noise > 0 && compiled.userVar[cell]! >= 0 && compiled.contextVar[cell]! > 0 && compiled.meanVar[cell]! > 0))
          violations.push(cell);
        if (!(total >= noise / PRIOR_CAP - 1e-12)) violations.push(cell);
      }
    }
    expect(violations).toEqual([]);
  });

  it('learns between-user spread from moments: a value that splits users gets a wider prior than one everybody rates alike', () => {
    const prior = emptyPopulation();
    const split = cellIndex(LOW, slotOfFraming('purpose'));
    const alike = cellIndex(LOW, slotOfFraming('challenge'));
    prior.same[2 * split] = 0.04 * 100;
    prior.same[2 * split + 1] = 100;
    prior.spread[2 * split] = 0.07 * 100;
    prior.spread[2 * split + 1] = 100;
    prior.same[2 * alike] = 0.001 * 100;
    prior.same[2 * alike + 1] = 100;
    prior.spread[2 * alike] = 0.031 * 100;
    prior.spread[2 * alike + 1] = 100;
    const compiled = compilePopulation(prior);
    const total = (cell: number) => compiled.userVar[cell]! + compiled.contextVar[cell]!;
    expect(total(split)).toBeCloseTo(0.04, 9);
    expect(total(alike)).toBeCloseTo(compiled.noise[alike]! / PRIOR_CAP, 9); // 0.001 is below the cap's floor
    expect(total(split)).toBeGreaterThan(total(alike));
  });
});

describe('compilePopulation with degenerate moments', () => {
  it('keeps every spread finite and positive when all rewards were identical (zero moments)', () => {
    const prior = emptyPopulation();
    for (let cell = 0; cell < CELL_COUNT; cell++) {
      prior.w[cell] = prior.wr[cell] = prior.n[cell] = 100;
      prior.same[2 * cell + 1] = 20;
      prior.cross[2 * cell + 1] = 20;
      prior.spread[2 * cell + 1] = 20;
    }
    const compiled = compilePopulation(prior);
    for (const values of [compiled.userVar, compiled.contextVar, compiled.noise, compiled.mean, compiled.meanVar]) {
      expect(Array.from(values).every(Number.isFinite)).toBe(true);
    }
    for (let cell = 0; cell < CELL_COUNT; cell++) expect(compiled.userVar[cell]! + compiled.contextVar[cell]!).toBeGreaterThan(0);
    const decision = engine.decide(engine.initialState(prior), { complexity: 'low' }, {}, seededRandom(3), prior);
    expect(Number.isFinite(decision.confidence)).toBe(true);
    expect(Object.values(decision.probabilities).every(Number.isFinite)).toBe(true);
  });
});

describe('parsePopulation', () => {
  it('returns an empty prior for anything that is not a pop-v1 prior', () => {
    const valid = emptyPopulation();
    for (const garbage of [
      null,
      undefined,
      42,
      'pop-v1',
      [],
      {},
      { format: 'pop-v1' },
      { ...valid, format: 'pop-v2' },
      { ...valid, w: [1, 2] },
      { ...valid, events: -1 },
    ]) {
      expect(parsePopulation(garbage)).toEqual(emptyPopulation());
    }
  });

  it('round-trips a prior through JSON', () => {
    const prior = uniformlyLogged(LOW, 'curiosity', seededRandom(8));
    expect(prior.events).toBeGreaterThan(0);
    expect(parsePopulation(JSON.parse(JSON.stringify(prior)))).toEqual(prior);
    expect(engine.parsePrior(JSON.parse(JSON.stringify(prior)))).toEqual(prior);
  });
});
