--[[
  An outcome's claim (docs/adr/0002-exactly-once-outcomes.md), as a function, so that
  claimKeyThenOutcome-4.lua can run it after an idempotency key's claim.

  claimOutcome(fingerprintKey, pendingKey, fingerprint, ttl, requestId, acceptedAt, pendingTtl)
    the parameters of claimOutcome-2.lua's KEYS[1..2] then ARGV[1..5], in that order; see that
    file's header for their meaning.

  Returns 'new' for a first outcome, 'same' for a retry with the same signals, 'conflict'
  otherwise.
]]
--- @include "renewLifetime"

-- The marks outlive the last by pendingTtl to pendingTtl + this: renewed about once a minute
-- for a busy user (includes/renewLifetime.lua).
local MARKS_RENEWAL_MS = 60000

local function claimOutcome(fingerprintKey, pendingKey, fingerprint, ttl, requestId, acceptedAt, pendingTtl)
  local cur = redis.call('GET', fingerprintKey)
  if not cur then
    redis.call('SET', fingerprintKey, fingerprint, 'EX', ttl)
    redis.call('ZADD', pendingKey, acceptedAt, requestId)
    renewLifetime(pendingKey, tonumber(pendingTtl) * 1000, MARKS_RENEWAL_MS)
    return 'new'
  end
  if cur == fingerprint then return 'same' end
  return 'conflict'
end
