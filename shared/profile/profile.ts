import { z } from 'zod';
import { DIMENSIONS, DIMENSION_NAMES, pinsSchema, profilePhaseSchema, type Dimension, type Pins } from '../domain/arms';
import { storedStateSchema, type Engine } from '../domain/engine/engine';
import type { EngineState } from '../domain/engine/state';
import type { ProfileSummary } from '../domain/learner';

/**
 * A profile as stored in Postgres and cached in Redis, its learner state read into the engine's
 * type where it is read (here for the cache, profile.repository.ts for Postgres), once.
 */
export const storedProfileSchema = z.object({
  userId: z.string(),
  /** Changes when a profile is erased and created again; guards caches against resurrection. */
  generation: z.string(),
  version: z.number().int().min(0),
  state: storedStateSchema,
  pins: pinsSchema,
  interactionCount: z.number().int().min(0),
  updatedAt: z.string(),
});
export type StoredProfile = z.infer<typeof storedProfileSchema>;

/** Profile fields a PUT can pin. */
export const pinnableFieldSchema = z.enum([
  DIMENSIONS.framing.profileField,
  DIMENSIONS.style.profileField,
  DIMENSIONS.complexityHandling.profileField,
  DIMENSIONS.encouragement.profileField,
]);

/** Profile fields a version's `changed` list can name. */
export const changeableFieldSchema = z.enum([...pinnableFieldSchema.options, 'pinned', 'profilePhase', 'interactionCount']);
export type ChangeableField = z.infer<typeof changeableFieldSchema>;

/** The profile object (docs/API.md). */
export const profileResponseSchema = z.object({
  userId: z.string(),
  preferredFraming: z.enum(DIMENSIONS.framing.values),
  communicationStyle: z.enum(DIMENSIONS.style.values),
  complexityPreference: z.enum(DIMENSIONS.complexityHandling.values),
  encouragementLevel: z.enum(DIMENSIONS.encouragement.values),
  pinned: z.array(pinnableFieldSchema),
  profilePhase: profilePhaseSchema,
  interactionCount: z.number().int().min(0),
  lastUpdated: z.iso.datetime(),
  profileVersion: z.string().regex(/^v\d+$/),
});
export type ProfileResponse = z.infer<typeof profileResponseSchema>;

/** A profile with no outcomes yet; `state` is the learner's initial state for the tenant's population prior. */
export function newProfile(id: Pick<StoredProfile, 'userId' | 'generation'>, state: EngineState, now: Date): StoredProfile {
  return {
    userId: id.userId,
    generation: id.generation,
    version: 0,
    state,
    pins: {},
    interactionCount: 0,
    updatedAt: now.toISOString(),
  };
}

export function pinnedFields(pins: Pins): ProfileResponse['pinned'] {
  return DIMENSION_NAMES.filter((dim) => pins[dim] !== undefined).map((dim) => DIMENSIONS[dim].profileField);
}

/** What a client sees of a profile that pins and outcomes change (all but its id, time and version). */
export type ShownProfile = Omit<ProfileResponse, 'userId' | 'lastUpdated' | 'profileVersion'>;

export function shownProfile(pins: Pins, summary: ProfileSummary, interactionCount: number): ShownProfile {
  const current = (dim: Dimension) => pins[dim] ?? summary.best[dim];
  return {
    preferredFraming: current('framing') as ProfileResponse['preferredFraming'],
    communicationStyle: current('style') as ProfileResponse['communicationStyle'],
    complexityPreference: current('complexityHandling') as ProfileResponse['complexityPreference'],
    encouragementLevel: current('encouragement') as ProfileResponse['encouragementLevel'],
    pinned: pinnedFields(pins),
    profilePhase: summary.phase,
    interactionCount,
  };
}

export function toProfileResponse(profile: StoredProfile, learner: Pick<Engine, 'summarize'>): ProfileResponse {
  return {
    userId: profile.userId,
    ...shownProfile(profile.pins, learner.summarize(profile.state), profile.interactionCount),
    lastUpdated: new Date(profile.updatedAt).toISOString(),
    profileVersion: `v${profile.version}`,
  };
}

/** Whether two shown values are the same: strings and numbers, or lists of them in order. */
function sameShown(a: ShownProfile[ChangeableField], b: ShownProfile[ChangeableField]): boolean {
  if (!Array.isArray(a) || !Array.isArray(b)) return a === b;
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

/** Profile fields whose value differs between two responses (for version history). */
export function changedFields(before: ShownProfile, after: ShownProfile): ChangeableField[] {
  return changeableFieldSchema.options.filter((field) => !sameShown(before[field], after[field]));
}
