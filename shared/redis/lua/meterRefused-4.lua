--[[
  cosMeterRefused (shared/limits/limiter.ts): meters a live request refused before the limiter
  (403: a restricted account or a missing scope) as 4xx, and reads the key's sliding log and the
  month's count for its X-RateLimit-* headers, without counting the request in either.

  Input:
    KEYS[1] the API key's sliding log (sorted set: admission times, epoch µs)
    KEYS[2] the account's request count of the month
    KEYS[3] the day's usage hash
    KEYS[4] the set of days with usage

    ARGV[1] now in epoch µs, or '' for Redis server time
    ARGV[2] the usage field of this request as 4xx
    ARGV[3] today, YYYY-MM-DD (UTC)

  Output:
    {counted, used, now, oldest}: the requests admitted in the key's last second, the month's
    count, and the script's time and the oldest admission of the last second (epoch µs)
]]
--- @include "slidingWindow"

local now = clockMicros(ARGV[1])
redis.call('HINCRBY', KEYS[3], ARGV[2], 1)
redis.call('SADD', KEYS[4], ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - WINDOW_MICROS)
local n = redis.call('ZCARD', KEYS[1])
local oldest = now
if n > 0 then oldest = tonumber(redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]) end
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
return {n, used, now, oldest}
