--[[
  cosIdempotencyRelease (shared/idempotency/idempotency.repository.ts): frees an idempotency
  key for a retry, if the request's lease is still held.

  Input:
    KEYS[1] the idempotency record

    ARGV[1] the lease

  Output:
    1 when freed, 0 when the lease was no longer held

  A lease is never propagated (includes/idempotencyClaim.lua), so neither is its removal.
]]
--- @include "unlogged"

if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
unlogged()
return redis.call('DEL', KEYS[1])
