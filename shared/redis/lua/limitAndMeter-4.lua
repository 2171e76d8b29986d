--[[
  cosLimitAndMeter (shared/limits/limiter.ts): one live request's limits and metering, in one
  atomic call (docs/adr/0005-rate-limiter.md). The limiter itself is includes/limitAndMeter.lua.

  Input:
    KEYS[1] the API key's sliding log (list: admission times, epoch µs, oldest first)
    KEYS[2] the account's request count of the month
    KEYS[3] the day's usage hash (field <keyId>|<endpoint>|<class> → count)
    KEYS[4] the set of days with usage (read by the usage flush)

    ARGV[1] now in epoch µs, or '' for Redis server time
    ARGV[2] the key's limit per second
    ARGV[3] the account's quota per month, 0 for none
    ARGV[4] the usage field of this request as 2xx
    ARGV[5] the usage field of this request as 429
    ARGV[6] seconds the month's count is kept (to 40 days after the month)
    ARGV[7] today, YYYY-MM-DD (UTC)

  Output:
    {admitted, monthRefusal, counted, now, oldest}, see includes/limitAndMeter.lua
]]
--- @include "limitAndMeter"

return limitAndMeter(KEYS[1], KEYS[2], KEYS[3], KEYS[4],
                     ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
