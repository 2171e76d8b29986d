--[[
  cosSnapshotPeriod (shared/flush/snapshot-flush.ts): the first step of the exactly-once flush
  of counters (docs/adr/0006-usage-flush.md). Takes a period (a day of usage, a minute of
  traffic) off the set of periods with counts and, when its hash exists, renames the hash to a
  snapshot and records the snapshot; new counts then start a fresh hash.

  Input:
    KEYS[1] the period's live hash
    KEYS[2] the snapshot's hash
    KEYS[3] the set of snapshots not yet deleted
    KEYS[4] the set of periods that may have counts

    ARGV[1] the snapshot's id (<period>:<UUID>)
    ARGV[2] the period

  Output:
    1 when a snapshot was taken, 0 when the period had no hash
]]
redis.call('SREM', KEYS[4], ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('RENAME', KEYS[1], KEYS[2])
  redis.call('SADD', KEYS[3], ARGV[1])
  return 1
end
return 0
