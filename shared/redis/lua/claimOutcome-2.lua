--[[
  cosClaimOutcome (shared/profile/outcome-claims.repository.ts): claims a requestId's outcome
  (docs/adr/0002-exactly-once-outcomes.md). The first outcome wins; a retry with the same
  signals is accepted again. A first outcome is also marked pending for its user until a worker
  has applied it (docs/adr/0008-read-your-outcomes.md). The claim itself is
  includes/claimOutcome.lua.

  Input:
    KEYS[1] the requestId's outcome fingerprint
    KEYS[2] the user's pending-outcome marks (sorted set: requestId → acceptance time, epoch ms)

    ARGV[1] the outcome's fingerprint
    ARGV[2] the fingerprint's TTL (s)
    ARGV[3] the requestId
    ARGV[4] the acceptance time (epoch ms)
    ARGV[5] the marks' TTL (s): the least they live after the last

  Output:
    'new' for a first outcome, 'same' for a retry with the same signals, 'conflict' otherwise
]]
--- @include "claimOutcome"

return claimOutcome(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
