--[[
  Writes kept out of the append-only file and the replicas (docs/adr/0005-rate-limiter.md,
  docs/adr/0020-idempotency-keys.md), for state that lives about a second and that a restart or
  failover of Redis may forget at no cost that matters: a live key's last second of
  admissions, an idempotency key's lease while its request runs. Any other write is also a line
  of the append-only file, whose writes and rewrites cost Redis CPU in proportion.

  unlogged()  the writes from here on stay in this Redis's memory
  logged()    the writes from here on are propagated again, as a script's writes are by default

  With effects replication (Redis 7) the writes around them are propagated as usual; none of
  those may depend on what an unlogged write left. A script that catches an error raised
  between the two calls must call logged() before it writes again.
]]
local function unlogged()
  redis.set_repl(redis.REPL_NONE)
end

local function logged()
  redis.set_repl(redis.REPL_ALL)
end
