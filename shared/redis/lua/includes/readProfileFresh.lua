--[[
  A profile read with its user's pending outcomes (docs/adr/0008-read-your-outcomes.md), as a
  function, so that limitThenReadProfile-6.lua can run it after the limiter.

  readProfileFresh(profileKey, pendingKey, since, knownVersion, knownGeneration, knownUpdatedAt)
    the parameters of readProfileFresh-2.lua's KEYS[1..2] then ARGV[1..4], in that order; see
    that file's header for their meaning.

  Returns {pending} when nothing is cached, {pending, version} when the caller's copy is
  current, else {pending, version, JSON}: pending is the count of the user's marks since
  `since`. The update time tells apart the two seeds of a new user (version 0), made by the API
  and by the worker.
]]
local function readProfileFresh(profileKey, pendingKey, since, knownVersion, knownGeneration, knownUpdatedAt)
  local pending = redis.call('ZCOUNT', pendingKey, since, '+inf')
  local cur = redis.call('HMGET', profileKey, 'version', 'generation', 'updatedAt')
  if not cur[1] then return {pending} end
  if cur[1] == knownVersion and cur[2] == knownGeneration and cur[3] == knownUpdatedAt then return {pending, cur[1]} end
  return {pending, cur[1], redis.call('HGET', profileKey, 'data')}
end
