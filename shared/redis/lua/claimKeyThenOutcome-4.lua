--[[
  cosClaimKeyThenOutcome (shared/profile/outcome-claims.repository.ts): an outcome's idempotency
  key claimed and, when taken, the outcome claimed, in one call. Its KEYS and ARGV are
  includes/idempotencyClaim.lua's, then includes/claimOutcome.lua's.

  Input:
    KEYS[1] the idempotency record                     (includes/idempotencyClaim.lua)
    KEYS[2] the user's index of idempotency records
    KEYS[3] the requestId's outcome fingerprint        (claimOutcome-2.lua KEYS[1])
    KEYS[4] the user's pending-outcome marks           (KEYS[2])

    ARGV[1] the lease                                  (includes/idempotencyClaim.lua)
    ARGV[2] the lease's lifetime (ms)
    ARGV[3] the key's digest
    ARGV[4] now (epoch ms)
    ARGV[5] the idempotency window (ms)
    ARGV[6] the outcome's fingerprint                  (claimOutcome-2.lua ARGV[1])
    ARGV[7] the fingerprint's TTL (s)                  (ARGV[2])
    ARGV[8] the requestId                              (ARGV[3])
    ARGV[9] the acceptance time (epoch ms)             (ARGV[4])
    ARGV[10] the marks' TTL (s)                        (ARGV[5])

  Output:
    {0, record} when the key is held (the record it holds, no outcome claimed); {1, claim} when
    the lease was taken, claim being claimOutcome-2.lua's reply
]]
--- @include "idempotencyClaim"
--- @include "claimOutcome"

local held = claimIdempotencyKey(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if held then return {0, held} end
return {1, claimOutcome(KEYS[3], KEYS[4], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10])}
