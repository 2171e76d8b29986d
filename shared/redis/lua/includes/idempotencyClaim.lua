--[[
  An idempotency key's claim (docs/API.md#idempotent-requests), as a function, so that the first
  call a POST makes in its user's slot takes the key in the same round trip
  (claimThenReadProfile-4.lua, limitClaimThenReadProfile-8.lua, claimKeyThenOutcome-4.lua).

  claimIdempotencyKey(recordKey, indexKey, lease, leaseMs, digest, now, windowMs)
    recordKey  the idempotency record
    indexKey   the user's index of records (sorted set: key digest → when the record expires at
               the latest, epoch ms; expired members are pruned here). It outlives every record
               it lists: a record's window starts when its request completes, within the lease
               of its claim.
    lease      the record while the request runs
    leaseMs    the lease's lifetime (ms)
    digest     the key's digest (the index member)
    now        epoch ms
    windowMs   the idempotency window (ms)

  Returns nil when the lease was taken, else the record the key holds.
]]
--- @include "renewLifetime"
--- @include "unlogged"

-- The index outlives the newest record by up to this much: renewed about once a minute for a
-- busy user (includes/renewLifetime.lua).
local INDEX_RENEWAL_MS = 60000

local function claimIdempotencyKey(recordKey, indexKey, lease, leaseMs, digest, now, windowMs)
  -- NX with GET (Redis 7): the lease is taken only if the key is free, else the record it holds
  -- comes back. The lease ends with its request, which a restart of Redis ends too: it is kept
  -- out of the append-only file and the replicas (includes/unlogged.lua).
  unlogged()
  local current = redis.call('SET', recordKey, lease, 'NX', 'PX', leaseMs, 'GET')
  logged()
  if current then return current end
  local at = tonumber(now)
  local lives = tonumber(windowMs) + tonumber(leaseMs)
  redis.call('ZADD', indexKey, at + lives, digest)
  redis.call('ZREMRANGEBYSCORE', indexKey, '-inf', at)
  renewLifetime(indexKey, lives, INDEX_RENEWAL_MS)
  return nil
end
