--[[
  cosIdempotencyComplete (shared/idempotency/idempotency.repository.ts): replaces each request's
  lease, if it is still held, by its response record (docs/adr/0020-idempotency-keys.md). Its
  file name carries no key count: the caller passes the count first — the records that one
  event-loop turn completed on one node, or a single record on a cluster, where each record
  lives in its user's slot.

  Input:
    KEYS[1..n] the idempotency records

    ARGV[1]        the idempotency window (ms)
    ARGV[2i]       the lease of KEYS[i]
    ARGV[2i + 1]   the response record of KEYS[i]

  Output:
    for each record, 1 when stored, 0 when its lease was lost (expired, erased)
]]
local window = ARGV[1]
local stored = {}
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[2 * i] then
    redis.call('SET', KEYS[i], ARGV[2 * i + 1], 'PX', window)
    stored[i] = 1
  else
    stored[i] = 0
  end
end
return stored
