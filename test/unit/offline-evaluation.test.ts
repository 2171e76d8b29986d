import type { Choice, TaskComplexity } from '../../shared/domain/arms';
import {
  evaluateOffline,
  loggingPropensity,
  MIN_PROPENSITY,
  UNIFORM_PROBABILITY,
  type LoggedEvent,
} from '../../shared/evaluation/offline-evaluation';

const A: Choice = { framing: 'micro_steps', style: 'direct', complexityHandling: 'chunked', encouragement: 'minimal' };
const B: Choice = { framing: 'purpose', style: 'warm', complexityHandling: 'scaffolded', encouragement: 'moderate' };
const C: Choice = { framing: 'curiosity', style: 'playful', complexityHandling: 'whole', encouragement: 'enthusiastic' };
const bestByComplexity: Record<TaskComplexity, Choice> = { low: A, medium: A, high: C };
/** Without a task complexity the population's favourite is B. */
const populationBest = (complexity: TaskComplexity | undefined) => (complexity ? bestByComplexity[complexity] : B);

/** Uniform random picks one of 5·4·3·3 = 180 combinations; framing probability f gives propensity f/36. */
const withFraming = (framing: number) => ({ framing, style: 1 / 4, complexityHandling: 1 / 3, encouragement: 1 / 3 });
const event = (
  reward: number,
  probabilities: LoggedEvent['probabilities'],
  choice = A,
  complexity: TaskComplexity | null = 'low',
): LoggedEvent => ({
  choice,
  probabilities,
  ...(complexity ? { taskComplexity: complexity } : {}),
  reward,
});
const PINNED = { framing: 1, style: 1, complexityHandling: 1, encouragement: 1 };

describe('offline evaluation estimators', () => {
  it('uses Π 1/K for uniform random and the product of the logged probabilities, clamped, as propensity', () => {
    expect(UNIFORM_PROBABILITY).toBeCloseTo(1 / 180, 15);
    expect(loggingPropensity({ framing: 0.5, style: 0.5, complexityHandling: 1, encouragement: 0.2 })).toBeCloseTo(0.05, 15);
    expect(loggingPropensity(PINNED)).toBe(1);
    expect(loggingPropensity({ framing: 0, style: 1, complexityHandling: 1, encouragement: 1 })).toBe(MIN_PROPENSITY);
    expect(loggingPropensity({ framing: 1e-4, style: 1e-4, complexityHandling: 1, encouragement: 1 })).toBe(MIN_PROPENSITY);
  });

  it('matches hand-computed service mean, IPS and SNIPS with their CIs for uniform random', () => {
    // Uniform weights w = (1/180)/p: framing 1/5 → 1, 2/5 → 0.5, 1/10 → 2, 4/5 → 0.25.
    const events = [
      event(1, withFraming(1 / 5)),
      event(0.5, withFraming(2 / 5)),
      event(0.25, withFraming(1 / 10)),
      event(0.8, withFraming(4 / 5)),
    ];
    const result = evaluateOffline(events, populationBest);
    expect(result.events).toBe(4);

    // Service: r = [1, .5, .25, .8], mean .6375; Σ(r − mean)² = .326875, sd² = .326875/3,
    // half-width 1.96·√(sd²/4) = .3234866.
    expect(result.service!.mean).toBeCloseTo(0.6375, 10);
    expect(result.service!.events).toBe(4);
    expect(result.service!.ci![0]).toBeCloseTo(0.3140134, 6);
    expect(result.service!.ci![1]).toBeCloseTo(0.9609866, 6);

    // IPS: w·r = [1, .25, .5, .2], mean .4875; Σ(x − mean)² = .401875, half-width 1.96·√(.401875/3/4) = .3586831.
    const { ips, snips } = result.uniformRandom;
    expect(ips!.value).toBeCloseTo(0.4875, 10);
    expect(ips!.events).toBe(4);
    expect(ips!.ci![0]).toBeCloseTo(0.1288169, 6);
    expect(ips!.ci![1]).toBeCloseTo(0.8461831, 6);

    // SNIPS: Σw·r / Σw = 1.95 / 3.75 = .52; w(r − .52) = [.48, −.01, −.54, .07], Σ squares .527,
    // half-width 1.96·√.527 / 3.75 = .3794286.
    expect(snips!.value).toBeCloseTo(0.52, 10);
    expect(snips!.events).toBe(4);
    expect(snips!.ci![0]).toBeCloseTo(0.1405714, 6);
    expect(snips!.ci![1]).toBeCloseTo(0.8994286, 6);

    expect(result.lift.uniformRandom!.difference).toBeCloseTo(0.6375 - 0.52, 10);
    expect(result.lift.uniformRandom!.ratio).toBeCloseTo(0.6375 / 0.52, 10);
  });

  it('weights a deterministic population-best target by 1/p on events matching it in all four dimensions at their complexity', () => {
    const events = [
      event(1, { framing: 0.5, style: 1, complexityHandling: 1, encouragement: 1 }, C, 'high'), // matches, w = 2
      event(0.5, { framing: 0.5, style: 0.5, complexityHandling: 1, encouragement: 1 }, C, 'high'), // matches, w = 4
      event(1, PINNED, { ...C, encouragement: 'moderate' }, 'high'), // one dimension differs
      event(0.9, PINNED, C, 'low'), // C is not the best at low
    ];
    const result = evaluateOffline(events, populationBest);
    const best = result.populationBest;
    expect(best.choiceByComplexity).toEqual({ low: A, medium: A, high: C });
    expect(best.matchingEvents).toBe(2);

    // IPS: w·r = [2, 2, 0, 0], mean 1; sd² = 4/3, half-width 1.96·√(1/3) = 1.1316065.
    expect(best.ips!.value).toBeCloseTo(1, 10);
    expect(best.ips!.events).toBe(4);
    expect(best.ips!.ci![0]).toBeCloseTo(-0.1316065, 6);
    expect(best.ips!.ci![1]).toBeCloseTo(2.1316065, 6);

    // SNIPS: (2·1 + 4·.5) / 6 = 2/3; w(r − 2/3) = [2/3, −2/3], half-width 1.96·√(8/9) / 6 = .3079843.
    expect(best.snips!.value).toBeCloseTo(2 / 3, 10);
    expect(best.snips!.events).toBe(2);
    expect(best.snips!.ci![0]).toBeCloseTo(0.3586824, 6);
    expect(best.snips!.ci![1]).toBeCloseTo(0.974651, 6);

    // Service mean (1 + .5 + 1 + .9)/4 = .85 against SNIPS 2/3.
    expect(result.lift.populationBest!.difference).toBeCloseTo(0.85 - 2 / 3, 10);
    expect(result.lift.populationBest!.ratio).toBeCloseTo(1.275, 10);
  });

  it('compares events logged without a task complexity with what the population serves such contexts', () => {
    const events = [
      event(1, PINNED, B, null), // matches the no-complexity favourite
      event(0, PINNED, A, null), // A is the favourite at every complexity, not without one
      event(1, PINNED, A, 'low'), // matches at low
    ];
    const best = evaluateOffline(events, populationBest).populationBest;
    expect(best.choiceWithoutComplexity).toEqual(B);
    expect(best.matchingEvents).toBe(2);
    expect(best.snips!.value).toBeCloseTo(1, 10);
  });

  it('reports no estimates (null) and no lift when there are no events', () => {
    expect(evaluateOffline([], populationBest)).toEqual({
      events: 0,
      service: null,
      uniformRandom: { ips: null, snips: null },
      populationBest: { choiceByComplexity: bestByComplexity, choiceWithoutComplexity: B, matchingEvents: 0, ips: null, snips: null },
      lift: { uniformRandom: null, populationBest: null },
    });
  });

  it('gives population best an IPS of 0 without a CI and no SNIPS when no logged event matches it', () => {
    const result = evaluateOffline([event(1, PINNED, C, 'low'), event(0.5, PINNED, C, 'medium')], populationBest);
    expect(result.populationBest).toMatchObject({ matchingEvents: 0, ips: { value: 0, ci: null, events: 2 }, snips: null });
    expect(result.lift.populationBest).toBeNull();
    expect(result.service).toMatchObject({ mean: 0.75, events: 2 });
  });

  it('gives no CI for an estimate resting on one weighted event', () => {
    const result = evaluateOffline([event(0.4, withFraming(1 / 5), A, 'low')], populationBest);
    expect(result.service).toEqual({ mean: 0.4, ci: null, events: 1 });
    expect(result.uniformRandom.snips).toEqual({ value: expect.closeTo(0.4, 10), ci: null, events: 1 });
    expect(result.populationBest).toMatchObject({ matchingEvents: 1, snips: { value: 0.4, ci: null, events: 1 } });
    expect(result.populationBest.ips!.value).toBeCloseTo(0.4 * 180, 8);
  });

  it('keeps weights finite for a logged probability of 0 (clamped propensity)', () => {
    const result = evaluateOffline(
      [event(1, { framing: 0, style: 1, complexityHandling: 1, encouragement: 1 }), event(0, PINNED)],
      populationBest,
    );
    // Uniform weights: (1/180)/1e-6 and 1/180.
    expect(result.uniformRandom.ips!.value).toBeCloseTo(1e6 / 180 / 2, 6);
    expect(result.uniformRandom.snips!.value).toBeCloseTo(1e6 / (1e6 + 1), 10);
    expect(result.populationBest.ips!.value).toBeCloseTo(1e6 / 2, 4);
  });
});
