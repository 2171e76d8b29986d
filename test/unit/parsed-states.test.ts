import { KnownUsers } from '../../api/services/known-users';
import { ParsedStates } from '../../api/services/parsed-states';
import { redisKeys } from '../../shared/cache/keys';
import * as engineModule from '../../shared/domain/engine/engine';
import { createEngine } from '../../shared/domain/engine/engine';
import type { Tenant } from '../../shared/domain/environment';
import { newProfile, type StoredProfile } from '../../shared/profile/profile';
import { seededRandom } from '../../shared/domain/random';

/** The API's parsed learner states (api/services/parsed-states.ts): one parse per stored version of a user's state, kept with the user (KnownUsers). */
describe('ParsedStates', () => {
  const tenant: Tenant = { accountId: '1', environment: 'live' };
  const other: Tenant = { accountId: '2', environment: 'live' };
  const engine = createEngine();
  const prior = engine.emptyPrior();
  const known = (capacity?: number) => new KnownUsers(redisKeys('t'), 'secret', capacity);

  /** Counts the stored states read. */
  const counting = () => {
    const spy = jest.spyOn(engineModule, 'readEngineState');
    return { parsed: spy.mock.calls };
  };
  afterEach(() => jest.restoreAllMocks());

  /** A profile read from the cache: a new object, with its state as JSON gives it, at each read. */
  const stored = (version: number, generation = 'g1', updatedAt = '2026-11-24T00:00:00.000Z'): StoredProfile => {
    let state = engine.initialState(prior);
    const random = seededRandom(version);
    for (let i = 0; i < version; i++) {
      const { choice } = engine.decide(state, { context: { taskComplexity: 'medium' }, pins: {}, random }, prior);
      state = engine.update(state, { context: { taskComplexity: 'medium' }, choice, reward: random(), started: true }, prior);
    }
    return JSON.parse(JSON.stringify({ ...newProfile('u1', generation, state, new Date(updatedAt)), version, interactionCount: version }));
  };

  it('parses a stored state once per version: later reads of the same version get the same state object', () => {
    const { parsed } = counting();
    const states = new ParsedStates();
    const users = known();
    const first = states.get(users.of(tenant, 'h1'), stored(3));
    expect(states.get(users.of(tenant, 'h1'), stored(3))).toBe(first);
    expect(parsed).toHaveLength(1);
    expect(first).toEqual(stored(3).state);
  });

  it('parses again when the version, the generation or the update time differs, and keeps users and tenants apart', () => {
    const { parsed } = counting();
    const states = new ParsedStates();
    const users = known();
    const first = states.get(users.of(tenant, 'h1'), stored(3));
    const next = states.get(users.of(tenant, 'h1'), stored(4));
    expect(next).not.toBe(first);
    expect(next).toEqual(stored(4).state);
    states.get(users.of(tenant, 'h1'), stored(4, 'g2'));
    states.get(users.of(tenant, 'h1'), stored(4, 'g2', '2026-11-24T00:00:01.000Z'));
    states.get(users.of(tenant, 'h2'), stored(4, 'g2', '2026-11-24T00:00:01.000Z'));
    states.get(users.of(other, 'h2'), stored(4, 'g2', '2026-11-24T00:00:01.000Z'));
    expect(parsed).toHaveLength(6);
  });

  it("tells a new user's two seeds (version 0, by the API and by the worker) apart by their update time", () => {
    const { parsed } = counting();
    const states = new ParsedStates();
    const users = known();
    const apiSeed = states.get(users.of(tenant, 'h1'), stored(0, 'g1', '2026-11-24T00:00:00.000Z'));
    expect(states.get(users.of(tenant, 'h1'), stored(0, 'g1', '2026-11-24T00:00:00.000Z'))).toBe(apiSeed);
    expect(states.get(users.of(tenant, 'h1'), stored(0, 'g1', '2026-11-24T00:00:00.250Z'))).not.toBe(apiSeed);
    expect(parsed).toHaveLength(2);
  });

  it('keeps the states of at most its capacity of users, dropping one not used since the last sweep', () => {
    const { parsed } = counting();
    const states = new ParsedStates();
    const users = known(2);
    states.get(users.of(tenant, 'a'), stored(1));
    states.get(users.of(tenant, 'b'), stored(1));
    states.get(users.of(tenant, 'a'), stored(1)); // a is now used
    states.get(users.of(tenant, 'c'), stored(1)); // drops b
    expect(parsed).toHaveLength(3);
    states.get(users.of(tenant, 'a'), stored(1));
    states.get(users.of(tenant, 'c'), stored(1));
    expect(parsed).toHaveLength(3);
    states.get(users.of(tenant, 'b'), stored(1));
    expect(parsed).toHaveLength(4);
  });
});
