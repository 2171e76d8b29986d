--[[
  cosWritePopulationIfNewer (shared/population/population-cache.repository.ts): caches a
  tenant's population prior unless a newer version is cached. Versions come from a Postgres
  sequence, so whatever order workers (and resets) write in, the cache only moves forward.

  Input:
    KEYS[1] the tenant's cached prior (hash: version, data: JSON)

    ARGV[1] the prior's version
    ARGV[2] the prior as JSON

  Output:
    1 when written, 0 when refused
]]
local cur = redis.call('HGET', KEYS[1], 'version')
if cur and tonumber(cur) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'data', ARGV[2])
return 1
