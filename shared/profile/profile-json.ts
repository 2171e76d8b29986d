import type { EngineState } from '../domain/engine/state';
import type { StoredProfile } from './profile';

/**
 * A learner state's JSON, made once per state object: the worker writes each state it changes
 * to Postgres and then to the cache, and a state is a few kilobytes of numbers. Sound because
 * states are never mutated (shared/domain/engine/README.md, "Invariants").
 */
const made = new WeakMap<EngineState, string>();

export function stateJson(state: EngineState): string {
  let json = made.get(state);
  if (json === undefined) made.set(state, (json = JSON.stringify(state)));
  return json;
}

/** The JSON of `fields` and a `state` member, the state's JSON spliced in as stateJson made it. */
export function withStateJson(fields: Record<string, unknown> & { state?: never }, state: EngineState): string {
  const head = JSON.stringify(fields);
  return `${head.slice(0, -1)}${head === '{}' ? '' : ','}"state":${stateJson(state)}}`;
}

/** A stored profile's JSON, as the cache holds it. */
export function profileJson(profile: StoredProfile): string {
  const { state, ...fields } = profile;
  return withStateJson(fields, state);
}
