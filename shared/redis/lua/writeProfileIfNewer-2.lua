--[[
  cosWriteProfileIfNewer (shared/profile/profile-cache.repository.ts): caches a profile unless
  the cache holds a newer version of its generation, or the generation was erased, so the cache
  never moves backwards whatever order the API and workers write in
  (docs/adr/0003-cache-versioning.md).

  Input:
    KEYS[1] the user's cached profile (hash: version, generation, updatedAt, data: JSON)
    KEYS[2] the erased-generation marker of the profile's generation

    ARGV[1] the profile's version
    ARGV[2] the profile's generation
    ARGV[3] the profile as JSON
    ARGV[4] the cached profile's TTL (s)
    ARGV[5] the profile's update time

  Output:
    1 when written, 0 when refused
]]
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local cur = redis.call('HMGET', KEYS[1], 'version', 'generation')
if cur[1] and cur[2] == ARGV[2] and tonumber(cur[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'generation', ARGV[2], 'updatedAt', ARGV[5], 'data', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
