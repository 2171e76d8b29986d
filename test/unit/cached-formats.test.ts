import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CACHE_SCHEMA_VERSION } from '../../shared/redis/key-names';
import { loadScripts } from '../../shared/redis/scripts';
import { populationPriorSchema } from '../../shared/domain/engine/population';
import { engineStateSchema } from '../../shared/domain/engine/state';
import { storedProfileSchema } from '../../shared/profile/profile';

/**
 * What the Redis cache holds under its CACHE_SCHEMA_VERSION: profiles, with their learner state,
 * and population priors, each in a hash of named fields. Code reading a cached entry of another
 * format would take its state for unreadable (a user's learning starts again) or its prior for
 * empty — or read it as something else, or not find it — so a new format needs a new
 * CACHE_SCHEMA_VERSION, which abandons every cached entry at once
 * (docs/adr/0003-cache-versioning.md). This test pins each version to the formats it holds: it
 * fails when a format changes and the version does not. A new format: a new version, and its
 * fingerprint added here.
 *
 * (v1 changed format before 1.0, when no deployment held cached data: engine-v3 states, pop-v4
 * priors. Its fingerprint is of the JSON Schemas alone; v2 renamed the hashes' fields v, g, u, d
 * to version, generation, updatedAt, data, and its fingerprint counts the field names too.)
 */
const FORMATS_BY_VERSION: Readonly<Record<string, string>> = {
  v1: '5ab87403c40fd8daa669e5407c62bb83171d5f4df0314b54fc164135973d79e0',
  v2: '08a37b028e97b3b257a64f2c1c9d6067cf35144899e05428215c6eb63ed35e73',
};

/**
 * The field names the scripts give the cached hashes: every quoted name in a hash command of a
 * script (shared/redis/lua/). A renamed field is a new format as much as a changed schema.
 */
function hashFields(): string[] {
  const names = new Set<string>();
  for (const { lua } of loadScripts().values()) {
    for (const [, args] of lua.matchAll(/redis\.call\('H[A-Z]+',([^)]*)\)/g)) {
      for (const [, name] of args!.matchAll(/'([^']*)'/g)) names.add(name!);
    }
  }
  return [...names].sort();
}

/**
 * The JSON Schema of each cached format and the hashes' field names, hashed: it changes with any
 * field, type, bound or format name.
 */
function fingerprint(): string {
  const schemas = {
    profile: z.toJSONSchema(storedProfileSchema.extend({ state: engineStateSchema }), { unrepresentable: 'any' }),
    population: z.toJSONSchema(populationPriorSchema, { unrepresentable: 'any' }),
    hashFields: hashFields(),
  };
  return createHash('sha256').update(JSON.stringify(schemas)).digest('hex');
}

describe('cached formats', () => {
  it("name the hashes' fields in full, as the fingerprint reads them from the scripts", () => {
    expect(hashFields()).toEqual(['data', 'generation', 'updatedAt', 'version']);
  });

  it(`are the ones CACHE_SCHEMA_VERSION ${CACHE_SCHEMA_VERSION} was given (a new format needs a new version)`, () => {
    expect(FORMATS_BY_VERSION[CACHE_SCHEMA_VERSION]).toBe(fingerprint());
  });
});
