--[[
  The limiter (docs/adr/0005-rate-limiter.md) as a function, so that limitThenReadProfile-6.lua
  can run it before its read: checks the account's monthly quota, then the key's per-second
  limit as a sliding log (a sorted set of the admission times of the last second, at most
  `limit` entries), and meters the request — as 2xx optimistically, or as 429 when refused.

  limitAndMeter(logKey, monthKey, usageKey, usageDaysKey,
                injectedNow, limitArg, quotaArg, okField, refusedField, monthTtl, day, member)
    the parameters of limitAndMeter-4.lua's KEYS[1..4] then ARGV[1..8], in that order; see
    that file's header for their meaning.

  Returns {admitted, monthRefusal, counted, now, oldest}
    admitted      1 when the request is admitted, else 0
    monthRefusal  1 when the monthly quota refused it, else 0
    counted       the requests admitted in the key's last second (this one included when
                  admitted); the month's count when the quota refused it
    now, oldest   the script's time and the oldest admission of the last second, epoch µs
]]
--- @include "slidingWindow"

-- A key's log expires this long after its last admission (real time): by then every entry is
-- older than the window, and an idle key costs no memory.
local LOG_TTL_MS = 5000

local function limitAndMeter(logKey, monthKey, usageKey, usageDaysKey,
                             injectedNow, limitArg, quotaArg, okField, refusedField, monthTtl, day, member)
  local now = clockMicros(injectedNow)
  local limit = tonumber(limitArg)
  local quota = tonumber(quotaArg)
  redis.call('SADD', usageDaysKey, day)
  local used = tonumber(redis.call('GET', monthKey) or '0')
  if quota > 0 and used >= quota then
    redis.call('HINCRBY', usageKey, refusedField, 1)
    return {0, 1, used, now, now}
  end
  redis.call('ZREMRANGEBYSCORE', logKey, '-inf', now - WINDOW_MICROS)
  local n = redis.call('ZCARD', logKey)
  if n >= limit then
    redis.call('HINCRBY', usageKey, refusedField, 1)
    return {0, 0, n, now, tonumber(redis.call('ZRANGE', logKey, 0, 0, 'WITHSCORES')[2] or now)}
  end
  redis.call('ZADD', logKey, now, member)
  redis.call('PEXPIRE', logKey, LOG_TTL_MS)
  -- Only this function writes the month's count: its first request of the month sets its lifetime.
  if redis.call('INCR', monthKey) == 1 then redis.call('EXPIRE', monthKey, monthTtl) end
  redis.call('HINCRBY', usageKey, okField, 1)
  local oldest = now
  if n > 0 then oldest = tonumber(redis.call('ZRANGE', logKey, 0, 0, 'WITHSCORES')[2]) end
  return {1, 0, n + 1, now, oldest}
end
