--[[
  cosAddTraffic (shared/traffic/traffic-recorder.ts): adds one API process's counts of one
  minute to the minute's hash and marks the minute for the worker's flush
  (docs/adr/0012-traffic-recording.md). One call per minute rather than a command per field:
  building thousands of commands would cost the API more CPU than the counting itself.

  Input:
    KEYS[1] the minute's traffic hash (field → count)
    KEYS[2] the set of minutes with traffic

    ARGV[1] the minute (its label, added to KEYS[2])
    ARGV[2], ARGV[3], … pairs of a field and the count to add to it

  Output:
    1
]]
for i = 2, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('SADD', KEYS[2], ARGV[1])
return 1
