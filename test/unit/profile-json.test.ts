import { createEngine, emptyPrior } from '../../shared/domain/engine/engine';
import { newProfile, storedProfileSchema } from '../../shared/profile/profile';
import { profileJson, stateJson, withStateJson } from '../../shared/profile/profile-json';

const engine = createEngine();
const prior = emptyPrior();
const state = engine.update(
  engine.initialState(prior),
  {
    context: { taskComplexity: 'low', taskType: 'email' },
    choice: { framing: 'curiosity', style: 'direct', complexityHandling: 'chunked', encouragement: 'moderate' },
    reward: 0.25,
    started: false,
  },
  prior,
);

describe('profile JSON with the state serialized once', () => {
  it('reads back as the same profile JSON.stringify would have written', () => {
    const profile = {
      ...newProfile({ userId: 'ünï 😀', generation: 'g' }, state, new Date(0)),
      pins: { style: 'warm' as const },
      version: 3,
    };
    const json = profileJson(profile);
    expect(JSON.parse(json)).toEqual(JSON.parse(JSON.stringify(profile)));
    expect(storedProfileSchema.parse(JSON.parse(json))).toEqual(profile);
  });

  it('splices the state into any object, empty included', () => {
    expect(JSON.parse(withStateJson({}, state))).toEqual({ state: JSON.parse(JSON.stringify(state)) });
    expect(JSON.parse(withStateJson({ a: [1, '"'] }, state))).toEqual({ a: [1, '"'], state: JSON.parse(JSON.stringify(state)) });
  });

  it("keeps each state's JSON while the state lives: a state is never changed", () => {
    expect(stateJson(state)).toBe(JSON.stringify(state));
    expect(stateJson(state)).toBe(stateJson(state));
    expect(stateJson({ ...state, outcomes: state.outcomes + 1 })).toBe(JSON.stringify({ ...state, outcomes: state.outcomes + 1 }));
  });
});
