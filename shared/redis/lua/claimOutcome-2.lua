--[[
  cosClaimOutcome (shared/profile/outcome-claims.repository.ts): claims a requestId's outcome
  (docs/adr/0002-exactly-once-outcomes.md). The first outcome wins; a retry with the same
  signals is accepted again. A first outcome is also marked pending for its user until a worker
  has applied it (docs/adr/0008-read-your-outcomes.md).

  Input:
    KEYS[1] the requestId's outcome fingerprint
    KEYS[2] the user's pending-outcome marks (sorted set: requestId → acceptance time, epoch ms)

    ARGV[1] the outcome's fingerprint
    ARGV[2] the fingerprint's TTL (s)
    ARGV[3] the requestId
    ARGV[4] the acceptance time (epoch ms)
    ARGV[5] the marks' TTL (s)

  Output:
    'new' for a first outcome, 'same' for a retry with the same signals, 'conflict' otherwise
]]
local cur = redis.call('GET', KEYS[1])
if not cur then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
  redis.call('EXPIRE', KEYS[2], ARGV[5])
  return 'new'
end
if cur == ARGV[1] then return 'same' end
return 'conflict'
