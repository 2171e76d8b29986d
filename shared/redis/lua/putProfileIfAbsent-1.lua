--[[
  cosPutProfileIfAbsent (shared/profile/profile-cache.repository.ts): caches a brand-new user's
  profile unless one is cached already (docs/adr/0003-cache-versioning.md).

  Input:
    KEYS[1] the user's cached profile (hash: v version, g generation, u update time, d JSON)

    ARGV[1] the profile's version
    ARGV[2] the profile's generation
    ARGV[3] the profile as JSON
    ARGV[4] the cached profile's TTL (s)
    ARGV[5] the profile's update time

  Output:
    the cached profile's JSON: the one found, or ARGV[3] when none was
]]
local cur = redis.call('HGET', KEYS[1], 'd')
if cur then return cur end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'g', ARGV[2], 'u', ARGV[5], 'd', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return ARGV[3]
