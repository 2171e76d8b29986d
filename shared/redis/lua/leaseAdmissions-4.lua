--[[
  cosLeaseAdmissions (shared/limits/admission-leases.ts): gives back the unused slots of an API
  process's ended lease on a live key, and leases it new ones when the key's last second and
  the account's month leave room to spare (docs/adr/0005-rate-limiter.md, "Leases").

  A lease of `want` slots is `want` entries in the key's sliding log, dated when the lease ends
  (now + lifetime): each slot is used before that date, so it counts in the log for at least
  the second after its use, and the log never admits more than the limit in any one-second
  span. The month's count takes them at once too. Slots the process did not use are removed
  from both once the lease has ended (ARGV[6], ARGV[7]), once: a call resent after its reply was
  lost finds the lease's mark (KEYS[4]) and gives nothing back again, for the entries left dated
  like them are the lease's used slots.

  Input:
    KEYS[1] the API key's sliding log (list: admission times, epoch µs, oldest first)
    KEYS[2] the account's request count of this month
    KEYS[3] the account's request count of the given-back lease's month (KEYS[2] as a rule)
    KEYS[4] the given-back lease's mark, named by the lease (set for a minute; any key of the
            slot when nothing is given back)

    ARGV[1] now in epoch µs, or '' for Redis server time
    ARGV[2] the key's limit per second
    ARGV[3] the account's quota per month, 0 for none
    ARGV[4] slots wanted, 0 to give back only
    ARGV[5] the lease's lifetime, µs
    ARGV[6] unused slots given back, 0 for none
    ARGV[7] their date (epoch µs), as this script replied it
    ARGV[8] seconds the month's count is kept (to 40 days after the month)

  Output:
    {granted, counted, now, oldest, date}
    granted  the slots leased: ARGV[4], or 0 when the key's last second would hold more than
             half its limit with them, or the month more than its quota less twice them
    counted  the entries of the key's last second, the new slots included
    now      the script's time, epoch µs
    oldest   the oldest entry of the last second (now when there is none), epoch µs
    date     the new slots' date, epoch µs (0 when none were granted)
]]
--- @include "slidingWindow"

local now = clockMicros(ARGV[1])
local limit = tonumber(ARGV[2])
local quota = tonumber(ARGV[3])
local want = tonumber(ARGV[4])
local back = tonumber(ARGV[6])

if back > 0 and redis.call('SET', KEYS[4], 1, 'NX', 'PX', 60000) then
  removeLeased(KEYS[1], tonumber(ARGV[7]), back)
  redis.call('DECRBY', KEYS[3], back)
end
if want == 0 then return {0, 0, now, now, 0} end

local oldest = dropBefore(KEYS[1], now - WINDOW_MICROS)
local n = redis.call('LLEN', KEYS[1])
if n + want > math.floor(limit / 2) then return {0, n, now, oldest or now, 0} end
if quota > 0 and tonumber(redis.call('GET', KEYS[2]) or '0') + 2 * want > quota then
  return {0, n, now, oldest or now, 0}
end

local date = now + tonumber(ARGV[5])
appendLeased(KEYS[1], date, want)
if redis.call('INCRBY', KEYS[2], want) == want then redis.call('EXPIRE', KEYS[2], ARGV[8]) end
return {want, n + want, now, oldest or date, date}
