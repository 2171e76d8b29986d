--[[
  cosClaimThenReadProfile (shared/profile/profile-cache.repository.ts): a POST's idempotency key
  claimed and, when taken, the user's profile read, in one call (docs/adr/0020-idempotency-keys.md).
  Its KEYS and ARGV are includes/idempotencyClaim.lua's, then readProfileFresh-2.lua's.

  Input:
    KEYS[1] the idempotency record                     (includes/idempotencyClaim.lua)
    KEYS[2] the user's index of idempotency records
    KEYS[3] the user's cached profile                  (readProfileFresh-2.lua KEYS[1])
    KEYS[4] the user's pending-outcome marks           (KEYS[2])

    ARGV[1] the lease                                  (includes/idempotencyClaim.lua)
    ARGV[2] the lease's lifetime (ms)
    ARGV[3] the key's digest
    ARGV[4] now (epoch ms)
    ARGV[5] the idempotency window (ms)
    ARGV[6] count the marks from this time on (ms)     (readProfileFresh-2.lua ARGV[1])
    ARGV[7] the version of the caller's copy           (ARGV[2])
    ARGV[8] the generation of the caller's copy        (ARGV[3])
    ARGV[9] the update time of the caller's copy       (ARGV[4])

  Output:
    {0, record} when the key is held (the record it holds, nothing read); {1, read} when the
    lease was taken, read the profile read's reply (includes/readProfileFresh.lua)
]]
--- @include "idempotencyClaim"
--- @include "readProfileFresh"

local held = claimIdempotencyKey(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
if held then return {0, held} end
return {1, readProfileFresh(KEYS[3], KEYS[4], ARGV[6], ARGV[7], ARGV[8], ARGV[9])}
