--[[
  cosWorkerHeartbeat (shared/jobs/worker-group.repository.ts): a worker's heartbeat
  (docs/adr/0015-worker-partition-ownership.md). Records that the worker is alive and which
  partitions it consumes, and prunes the workers not heard from within the timeout.
  Last-seen times are the Redis server's clock, so workers on hosts whose clocks disagree never
  prune each other early. Both keys are refreshed with every beat and expire when no worker
  beats for twice the timeout.

  Input:
    KEYS[1] the live workers (sorted set: worker id → Redis time of its last beat, epoch ms)
    KEYS[2] the partitions each worker consumes (hash: worker id → `0,3,5`)

    ARGV[1] the worker's id
    ARGV[2] the partitions it consumes
    ARGV[3] the timeout (ms)

  Output:
    the live workers' ids, this one included
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local timeout = tonumber(ARGV[3])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local dead = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - timeout)
for i = 1, #dead do
  redis.call('ZREM', KEYS[1], dead[i])
  redis.call('HDEL', KEYS[2], dead[i])
end
redis.call('PEXPIRE', KEYS[1], 2 * timeout)
redis.call('PEXPIRE', KEYS[2], 2 * timeout)
return redis.call('ZRANGE', KEYS[1], 0, -1)
