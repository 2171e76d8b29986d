--[[
  cosIdempotencyClaim (shared/idempotency/idempotency.repository.ts): takes an idempotency key
  for a request when the key is free, listing it in its user's index (members scored by expiry;
  expired ones pruned here); otherwise returns what the key holds.

  Input:
    KEYS[1] the idempotency record
    KEYS[2] the user's index of records (sorted set: key digest → expiry, epoch ms)

    ARGV[1] the lease (the record while the request runs)
    ARGV[2] the lease's lifetime (ms)
    ARGV[3] the key's digest (the index member)
    ARGV[4] now (epoch ms)
    ARGV[5] the idempotency window (ms)

  Output:
    false (nil) when the lease was taken, else the record the key holds
]]
local current = redis.call('GET', KEYS[1])
if current then return current end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local now = tonumber(ARGV[4])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return false
