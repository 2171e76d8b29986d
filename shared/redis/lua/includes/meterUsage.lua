--[[
  One request counted in the day's usage hash (docs/adr/0006-usage-flush.md), shared by the
  limiter's scripts.

  meterUsage(usageKey, usageDaysKey, field, day)
    usageKey      the day's usage hash (field <keyId>|<endpoint>|<class> → count)
    usageDaysKey  the set of days with usage (read by the usage flush)
    field         this request's field
    day           the day, YYYY-MM-DD (UTC)

  The day joins the set when the field is new in the hash — the hash's first count since the
  flush last took it (a snapshot renames the hash and takes the day off the set in one step),
  or the field's first that day. A count that makes an existing field 1 again adds it once
  more, which changes nothing.
]]
local function meterUsage(usageKey, usageDaysKey, field, day)
  if redis.call('HINCRBY', usageKey, field, 1) == 1 then redis.call('SADD', usageDaysKey, day) end
end
