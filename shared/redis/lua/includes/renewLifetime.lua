--[[
  A key's lifetime kept long enough without rewriting it at every request: every write is also
  a line of the append-only file, whose rewrites cost Redis CPU in proportion. Shared by the
  keys that only bound their memory (a live key's rate log, a user's idempotency index and
  pending-outcome marks).

  renewLifetime(key, leastMs, renewalMs)
    key        an existing key
    leastMs    how long it must live from now, at least
    renewalMs  how much longer it is set to live when renewed: the larger, the rarer renewals
               of a busy key, and the longer an idle one outlives its need

  When less than leastMs is left (or none is set), the key is set to expire in
  leastMs + renewalMs; otherwise it is left as it is.
]]
local function renewLifetime(key, leastMs, renewalMs)
  if redis.call('PTTL', key) < leastMs then redis.call('PEXPIRE', key, leastMs + renewalMs) end
end
