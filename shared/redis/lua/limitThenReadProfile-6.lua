--[[
  cosLimitThenReadProfile (shared/limits/limited-read.ts): a live context call's limiter and,
  when it admits the request, the user's profile read, in one call (docs/adr/0016-hot-path.md).
  Its KEYS and ARGV are limitAndMeter-4.lua's, then readProfileFresh-2.lua's.

  Input:
    KEYS[1] the API key's sliding log                  (limitAndMeter-4.lua KEYS[1])
    KEYS[2] the account's request count of the month   (KEYS[2])
    KEYS[3] the day's usage hash                       (KEYS[3])
    KEYS[4] the set of days with usage                 (KEYS[4])
    KEYS[5] the user's cached profile                  (readProfileFresh-2.lua KEYS[1])
    KEYS[6] the user's pending-outcome marks           (KEYS[2])

    ARGV[1] now in epoch µs, or '' for Redis time      (limitAndMeter-4.lua ARGV[1])
    ARGV[2] the key's limit per second                 (ARGV[2])
    ARGV[3] the account's quota per month, 0 for none  (ARGV[3])
    ARGV[4] the usage field of this request as 2xx     (ARGV[4])
    ARGV[5] the usage field of this request as 429     (ARGV[5])
    ARGV[6] seconds the month's count is kept          (ARGV[6])
    ARGV[7] today, YYYY-MM-DD (UTC)                    (ARGV[7])
    ARGV[8]  count the marks from this time on (ms)    (readProfileFresh-2.lua ARGV[1])
    ARGV[9]  the version of the caller's copy          (ARGV[2])
    ARGV[10] the generation of the caller's copy       (ARGV[3])
    ARGV[11] the update time of the caller's copy      (ARGV[4])

  Output:
    {verdict} when the limiter refused the request; {verdict, read} when it admitted it;
    {verdict, error message} when the read failed. A script does not roll back: the limiter's
    counts stand, and the caller must still meter the request. verdict is the limiter's reply
    (includes/limitAndMeter.lua), read the profile read's (includes/readProfileFresh.lua).
]]
--- @include "limitAndMeter"
--- @include "readProfileFresh"

local verdict = limitAndMeter(KEYS[1], KEYS[2], KEYS[3], KEYS[4],
                              ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7])
if verdict[1] ~= 1 then return {verdict} end
local ok, fresh = pcall(readProfileFresh, KEYS[5], KEYS[6], ARGV[8], ARGV[9], ARGV[10], ARGV[11])
if not ok then return {verdict, type(fresh) == 'table' and fresh.err or tostring(fresh)} end
return {verdict, fresh}
