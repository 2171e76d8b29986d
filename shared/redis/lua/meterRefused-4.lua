--[[
  cosMeterRefused (shared/limits/limiter.ts): meters a live request refused before the limiter
  (403: a restricted account or a missing scope) as 4xx, and reads the key's sliding log and the
  month's count for its X-RateLimit-* headers, without counting the request in either.

  Input:
    KEYS[1] the API key's sliding log (list: admission times, epoch µs, oldest first)
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
--- @include "meterUsage"

local now = clockMicros(ARGV[1])
meterUsage(KEYS[3], KEYS[4], ARGV[2], ARGV[3])
local oldest = dropBefore(KEYS[1], now - WINDOW_MICROS)
local n = redis.call('LLEN', KEYS[1])
local used = tonumber(redis.call('GET', KEYS[2]) or '0')
return {n, used, now, oldest or now}
