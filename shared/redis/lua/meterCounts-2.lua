--[[
  cosMeterCounts (shared/limits/admission-leases.ts): adds one API process's counts of requests
  admitted on leased slots to the day's usage hash (docs/adr/0006-usage-flush.md), and marks
  the day for the usage flush. One call per day and usage shard, whatever the number of fields.

  Input:
    KEYS[1] the day's usage hash (field <keyId>|<endpoint>|<class> → count)
    KEYS[2] the set of days with usage (read by the usage flush)

    ARGV[1] the day, YYYY-MM-DD (UTC)
    ARGV[2], ARGV[3], … pairs of a field and the count to add to it (a move between classes
            adds −1 to one field)

  Output:
    1
]]
for i = 2, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
-- After every count: a snapshot may have taken the hash, and the day off the set, in between.
redis.call('SADD', KEYS[2], ARGV[1])
return 1
