--[[
  The limiter (docs/adr/0005-rate-limiter.md) as a function, so that limitThenReadProfile-6.lua
  can run it before its read: checks the account's monthly quota, then the key's per-second
  limit as a sliding log (a list of the admission times of the last second, oldest first, at
  most `limit` entries), and meters the request — as 2xx optimistically, or as 429 when refused.

  limitAndMeter(logKey, monthKey, usageKey, usageDaysKey,
                injectedNow, limitArg, quotaArg, okField, refusedField, monthTtl, day)
    the parameters of limitAndMeter-4.lua's KEYS[1..4] then ARGV[1..7], in that order; see
    that file's header for their meaning.

  Returns {admitted, monthRefusal, counted, now, oldest}
    admitted      1 when the request is admitted, else 0
    monthRefusal  1 when the monthly quota refused it, else 0
    counted       the requests admitted in the key's last second (this one included when
                  admitted); the month's count when the quota refused it
    now, oldest   the script's time and the oldest admission of the last second, epoch µs
]]
--- @include "slidingWindow"
--- @include "meterUsage"

local function limitAndMeter(logKey, monthKey, usageKey, usageDaysKey,
                             injectedNow, limitArg, quotaArg, okField, refusedField, monthTtl, day)
  local now = clockMicros(injectedNow)
  local limit = tonumber(limitArg)
  local quota = tonumber(quotaArg)
  if quota > 0 then
    local used = tonumber(redis.call('GET', monthKey) or '0')
    if used >= quota then
      meterUsage(usageKey, usageDaysKey, refusedField, day)
      return {0, 1, used, now, now}
    end
  end
  local oldest = dropBefore(logKey, now - WINDOW_MICROS)
  local n = redis.call('LLEN', logKey)
  if n >= limit then
    meterUsage(usageKey, usageDaysKey, refusedField, day)
    return {0, 0, n, now, oldest}
  end
  append(logKey, now)
  -- Only this function writes the month's count: its first request of the month sets its lifetime.
  if redis.call('INCR', monthKey) == 1 then redis.call('EXPIRE', monthKey, monthTtl) end
  meterUsage(usageKey, usageDaysKey, okField, day)
  return {1, 0, n + 1, now, oldest or now}
end
