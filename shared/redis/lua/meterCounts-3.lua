--[[
  cosMeterCounts (shared/limits/admission-leases.ts): adds one API process's counts of requests
  admitted on leased slots to the day's usage hash (docs/adr/0006-usage-flush.md), and marks
  the day for the usage flush. One call per day and usage shard, whatever the number of fields.
  A batch adds its counts once: a call resent (after a lost reply, or by the process retrying a
  failed one) finds the batch's mark and adds nothing.

  Input:
    KEYS[1] the day's usage hash (field <keyId>|<endpoint>|<class> → count)
    KEYS[2] the set of days with usage (read by the usage flush)
    KEYS[3] the batch's mark (set for an hour)

    ARGV[1] the day, YYYY-MM-DD (UTC)
    ARGV[2], ARGV[3], … pairs of a field and the count to add to it (a move between classes
            adds −1 to one field)

  Output:
    1 when the counts were added, 0 when the batch had been
]]
if not redis.call('SET', KEYS[3], 1, 'NX', 'PX', 3600000) then return 0 end
for i = 2, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
-- Every time, not only for a new field: the usage flush takes the hash and the day off the set together.
redis.call('SADD', KEYS[2], ARGV[1])
return 1
