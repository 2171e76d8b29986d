--[[
  An outcome's claim (docs/adr/0002-exactly-once-outcomes.md), as a function, so that
  claimKeyThenOutcome-4.lua can run it after an idempotency key's claim.

  claimOutcome(fingerprintKey, pendingKey, fingerprint, ttl, requestId, acceptedAt, pendingTtl)
    the parameters of claimOutcome-2.lua's KEYS[1..2] then ARGV[1..5], in that order; see that
    file's header for their meaning.

  Returns 'new' for a first outcome, 'same' for a retry with the same signals, 'conflict'
  otherwise.
]]
-- The marks' lifetime is renewed only when less than pendingTtl is left, by this much more:
-- about once a minute for a busy user, rather than written (and appended to the append-only
-- file) at every outcome.
local MARKS_RENEWAL_MS = 60000

local function claimOutcome(fingerprintKey, pendingKey, fingerprint, ttl, requestId, acceptedAt, pendingTtl)
  local cur = redis.call('GET', fingerprintKey)
  if not cur then
    redis.call('SET', fingerprintKey, fingerprint, 'EX', ttl)
    redis.call('ZADD', pendingKey, acceptedAt, requestId)
    local lives = tonumber(pendingTtl) * 1000
    if redis.call('PTTL', pendingKey) < lives then redis.call('PEXPIRE', pendingKey, lives + MARKS_RENEWAL_MS) end
    return 'new'
  end
  if cur == fingerprint then return 'same' end
  return 'conflict'
end
