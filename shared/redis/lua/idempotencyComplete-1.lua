--[[
  cosIdempotencyComplete (shared/idempotency/idempotency.repository.ts): replaces a request's
  lease, if it is still held, by the response record.

  Input:
    KEYS[1] the idempotency record

    ARGV[1] the lease
    ARGV[2] the response record
    ARGV[3] the idempotency window (ms)

  Output:
    1 when stored, 0 when the lease was lost (expired, erased)
]]
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
