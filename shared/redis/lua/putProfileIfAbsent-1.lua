--[[
  cosPutProfileIfAbsent (shared/profile/profile-cache.repository.ts): caches a brand-new user's
  profile unless one is cached already (docs/adr/0003-cache-versioning.md).

  Input:
    KEYS[1] the user's cached profile (hash: version, generation, updatedAt, data: JSON)

    ARGV[1] the profile's version
    ARGV[2] the profile's generation
    ARGV[3] the profile as JSON
    ARGV[4] the cached profile's TTL (s)
    ARGV[5] the profile's update time

  Output:
    the cached profile's JSON: the one found, or ARGV[3] when none was
]]
local cur = redis.call('HGET', KEYS[1], 'data')
if cur then return cur end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'generation', ARGV[2], 'updatedAt', ARGV[5], 'data', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return ARGV[3]
