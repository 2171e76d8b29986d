import { computeReward, QUICK_START_SCALE_SECONDS, REWARD_WEIGHTS } from '../../shared/domain/reward';

describe('computeReward', () => {
  it('uses the documented weights, which sum to 1', () => {
    expect(REWARD_WEIGHTS).toEqual({ started: 0.3, completed: 0.3, satisfaction: 0.2, flowState: 0.1, quickStart: 0.1 });
    expect(QUICK_START_SCALE_SECONDS).toBe(600);
  });

  it('with only `started`, is 1 when started and 0 when not', () => {
    expect(computeReward({ started: true })).toBe(1);
    expect(computeReward({ started: false })).toBe(0);
  });

  it('is the weighted mean of all five signals, quick start being exp(-t/600)', () => {
    const r = computeReward({ started: true, completed: false, satisfaction: 0.5, flowState: true, timeToStart: 600 });
    // 0.3·1 + 0.3·0 + 0.2·0.5 + 0.1·1 + 0.1·e^-1, over total weight 1
    expect(r).toBeCloseTo(0.3 + 0.1 + 0.1 + 0.1 * Math.exp(-1), 12);
  });

  it('matches a hand-computed full case', () => {
    // 0.3 + 0.3 + 0.2·0.8 + 0 + 0.1·exp(-120/600) = 0.76 + 0.0818730753 = 0.8418730753
    const r = computeReward({ started: true, completed: true, satisfaction: 0.8, flowState: false, timeToStart: 120 });
    expect(r).toBeCloseTo(0.8418730753, 9);
  });

  it('renormalises the weights over the signals present', () => {
    expect(computeReward({ started: true, completed: false })).toBeCloseTo(0.3 / 0.6, 12);
    expect(computeReward({ started: true, satisfaction: 0 })).toBeCloseTo(0.3 / 0.5, 12);
    expect(computeReward({ started: false, timeToStart: 0 })).toBeCloseTo(0.1 / 0.4, 12);
    expect(computeReward({ started: false, flowState: true, satisfaction: 1 })).toBeCloseTo(0.3 / 0.6, 12);
  });

  it('rewards a quicker start more, all else equal', () => {
    const at = (timeToStart: number) => computeReward({ started: true, completed: true, timeToStart });
    expect(at(0)).toBeGreaterThan(at(60));
    expect(at(60)).toBeGreaterThan(at(600));
    expect(at(600)).toBeGreaterThan(at(6000));
    expect(at(0)).toBe(1);
  });

  it('reaches exactly 1 for the best outcome and 0 for the worst with no quick start', () => {
    expect(computeReward({ started: true, completed: true, satisfaction: 1, flowState: true, timeToStart: 0 })).toBe(1);
    expect(computeReward({ started: false, completed: false, satisfaction: 0, flowState: false })).toBe(0);
  });

  it('stays within [0,1] for every combination of signals', () => {
    const bools = [undefined, true, false];
    for (const started of [true, false])
      for (const completed of bools)
        for (const flowState of bools)
          for (const satisfaction of [undefined, 0, 0.37, 1])
            for (const timeToStart of [undefined, 0, 1, 599, 1e9]) {
              const r = computeReward({ started, completed, flowState, satisfaction, timeToStart });
              expect(r).toBeGreaterThanOrEqual(0);
              expect(r).toBeLessThanOrEqual(1);
              expect(Number.isFinite(r)).toBe(true);
            }
  });
});
