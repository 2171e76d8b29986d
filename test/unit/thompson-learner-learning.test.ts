import { FRAMINGS, type Choice, type TaskComplexity } from '../../shared/domain/arms';
import { seededRandom, type Random } from '../../shared/domain/random';
import { thompsonLearner as learner, type ThompsonState } from '../../shared/domain/thompson-learner';
import { buildLearnedState } from '../support/learner-state.factory';

type RewardOf = (choice: Choice, complexity: TaskComplexity) => number;

/** Runs `steps` decide → reward → update rounds; returns the final state and the picks. */
function simulate(steps: number, complexityAt: (t: number) => TaskComplexity, rewardOf: RewardOf, seed: number) {
  const random = seededRandom(seed);
  const noise: Random = seededRandom(seed + 1_000_003);
  let state: ThompsonState = learner.initialState();
  const picks: Array<{ complexity: TaskComplexity; choice: Choice }> = [];
  for (let t = 0; t < steps; t++) {
    const complexity = complexityAt(t);
    const { choice } = learner.decide(state, { complexity }, {}, random);
    const reward = Math.min(1, Math.max(0, rewardOf(choice, complexity) + (noise() - 0.5) * 0.1));
    state = learner.update(state, { complexity }, choice, reward, reward > 0.5);
    picks.push({ complexity, choice });
  }
  return { state, picks };
}

/** The framing the learner exploits (chooses without exploring) at this complexity. */
function exploitedFramings(state: ThompsonState, complexity: TaskComplexity, seeds = 60): Set<string> {
  const exploited = new Set<string>();
  for (let seed = 0; seed < seeds; seed++) {
    const { choice, explored } = learner.decide(state, { complexity }, {}, seededRandom(seed));
    if (!explored.includes('framing')) exploited.add(choice.framing);
  }
  return exploited;
}

describe('thompsonLearner learning', () => {
  it.each([11, 22, 33])('converges on curiosity for a user who responds to it at high complexity (seed %d)', (seed) => {
    const { state, picks } = simulate(
      60,
      () => 'high',
      (c) => (c.framing === 'curiosity' ? 0.9 : 0.3),
      seed,
    );
    const lastTen = picks.slice(-10).filter((p) => p.choice.framing === 'curiosity').length;
    expect(lastTen).toBeGreaterThanOrEqual(8);
    const summary = learner.summarize(state);
    expect(summary.best.framing).toBe('curiosity');
    expect(summary.interactionCount).toBe(60);
    expect(summary.phase).not.toBe('cold_start');
  });

  it('learns a different best framing per task complexity (micro_steps at high, challenge at low)', () => {
    const preferred: Record<TaskComplexity, string> = { high: 'micro_steps', low: 'challenge', medium: 'purpose' };
    const { state } = simulate(
      80,
      (t) => (t % 2 === 0 ? 'high' : 'low'),
      (c, complexity) => (c.framing === preferred[complexity] ? 0.9 : 0.3),
      7,
    );
    expect(exploitedFramings(state, 'high')).toEqual(new Set(['micro_steps']));
    expect(exploitedFramings(state, 'low')).toEqual(new Set(['challenge']));
    // the per-complexity evidence itself points the same way
    const meanReward = (complexity: TaskComplexity, framing: string) => {
      const [n, sum] = state.byComplexity[complexity].framing[FRAMINGS.indexOf(framing as never)]!;
      return n > 0 ? sum / n : 0;
    };
    expect(meanReward('high', 'micro_steps')).toBeGreaterThan(meanReward('high', 'challenge'));
    expect(meanReward('low', 'challenge')).toBeGreaterThan(meanReward('low', 'micro_steps'));
  });

  it('starts a new complexity from what the user showed elsewhere', () => {
    // all evidence at high complexity; medium has none of its own
    const state = buildLearnedState({ framing: 'curiosity', style: 'warm', complexity: 'whole', encouragement: 'minimal' }, { rounds: 6 });
    expect(state.byComplexity.medium.framing.every(([n]) => n === 0)).toBe(true);
    expect(exploitedFramings(state, 'medium')).toEqual(new Set(['curiosity']));
  });

  it('is more confident after learning than at cold start', () => {
    const { state } = simulate(
      60,
      () => 'high',
      (c) => (c.framing === 'curiosity' ? 0.9 : 0.3),
      11,
    );
    const pins = { style: 'warm', complexity: 'whole', encouragement: 'minimal' } as const;
    const cold = learner.decide(learner.initialState(), { complexity: 'high' }, pins, seededRandom(1));
    const learned = learner.decide(state, { complexity: 'high' }, pins, seededRandom(1));
    expect(cold.confidence).toBeCloseTo(1 / FRAMINGS.length, 3);
    expect(learned.choice.framing).toBe('curiosity');
    expect(learned.confidence).toBeGreaterThan(0.5);
    expect(learned.confidence).toBeLessThanOrEqual(1);
  });
});

describe('thompsonLearner rationale', () => {
  const framingOnly = (framing: Choice['framing']): Choice => ({ framing, style: 'warm', complexity: 'whole', encouragement: 'minimal' });

  function decideUntil(state: ThompsonState, complexity: TaskComplexity, framing: string) {
    for (let seed = 0; seed < 200; seed++) {
      const decision = learner.decide(state, { complexity }, {}, seededRandom(seed));
      if (decision.choice.framing === framing) return decision;
    }
    throw new Error(`framing ${framing} never chosen`);
  }

  it('is non-empty and names the chosen framing at cold start', () => {
    for (let seed = 0; seed < 10; seed++) {
      const { rationale, choice } = learner.decide(learner.initialState(), { complexity: 'low' }, {}, seededRandom(seed));
      expect(rationale.length).toBeGreaterThan(20);
      expect(rationale).toContain(choice.framing);
      expect(rationale).toMatch(/no outcomes/i);
    }
  });

  it('quotes this user’s counts for the framing in this complexity after outcomes', () => {
    let state = learner.initialState();
    for (let i = 0; i < 5; i++) state = learner.update(state, { complexity: 'high' }, framingOnly('curiosity'), 1, i < 4);
    const { rationale } = decideUntil(state, 'high', 'curiosity');
    expect(rationale).toContain('curiosity');
    expect(rationale).toContain('4 of 5');
    expect(rationale).toContain('1.00');
  });

  it('falls back to the overall counts in a complexity without evidence', () => {
    let state = learner.initialState();
    for (let i = 0; i < 5; i++) state = learner.update(state, { complexity: 'high' }, framingOnly('curiosity'), 0.6, true);
    const { rationale } = decideUntil(state, 'low', 'curiosity');
    expect(rationale).toContain('5 of 5');
    expect(rationale).toContain('0.60');
    expect(rationale).toMatch(/low-complexity/);
  });

  it('mentions the pinned framing when the app pinned it', () => {
    const { rationale } = learner.decide(learner.initialState(), { complexity: 'high' }, { framing: 'purpose' }, seededRandom(1));
    expect(rationale).toMatch(/framing \(purpose\)/i);
    expect(rationale).toMatch(/pinned/);
  });
});
