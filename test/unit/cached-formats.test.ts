import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CACHE_SCHEMA_VERSION } from '../../shared/redis/key-names';
import { populationPriorSchema } from '../../shared/domain/engine/population';
import { engineStateSchema } from '../../shared/domain/engine/state';
import { storedProfileSchema } from '../../shared/profile/profile';

/**
 * What the Redis cache holds under its CACHE_SCHEMA_VERSION: profiles, with their learner state,
 * and population priors. Code reading a cached entry of another format would take its state for
 * unreadable (a user's learning starts again) or its prior for empty — or read it as something
 * else — so a new format needs a new CACHE_SCHEMA_VERSION, which abandons every cached entry at
 * once (docs/adr/0003-cache-versioning.md). This test pins each version to the formats it holds:
 * it fails when a format changes and the version does not. A new format: a new version, and its
 * fingerprint added here.
 *
 * (v1 changed format before 1.0, when no deployment held cached data: engine-v3 states, pop-v4
 * priors.)
 */
const FORMATS_BY_VERSION: Readonly<Record<string, string>> = {
  v1: '5ab87403c40fd8daa669e5407c62bb83171d5f4df0314b54fc164135973d79e0',
};

/** The JSON Schema of each cached format, hashed: it changes with any field, type, bound or format name. */
function fingerprint(): string {
  const schemas = {
    profile: z.toJSONSchema(storedProfileSchema.extend({ state: engineStateSchema }), { unrepresentable: 'any' }),
    population: z.toJSONSchema(populationPriorSchema, { unrepresentable: 'any' }),
  };
  return createHash('sha256').update(JSON.stringify(schemas)).digest('hex');
}

describe('cached formats', () => {
  it(`are the ones CACHE_SCHEMA_VERSION ${CACHE_SCHEMA_VERSION} was given (a new format needs a new version)`, () => {
    expect(FORMATS_BY_VERSION[CACHE_SCHEMA_VERSION]).toBe(fingerprint());
  });
});
