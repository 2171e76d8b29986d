--[[
  cosReadProfileFresh (shared/profile/profile-cache.repository.ts): a cached profile and its
  user's pending outcomes, in one call. The read itself is includes/readProfileFresh.lua.

  Input:
    KEYS[1] the user's cached profile (hash: version, generation, updatedAt, data: JSON)
    KEYS[2] the user's pending-outcome marks (sorted set scored by acceptance time, epoch ms)

    ARGV[1] count the marks from this time on (epoch ms)
    ARGV[2] the version of the caller's copy, '' for none
    ARGV[3] the generation of the caller's copy, '' for none
    ARGV[4] the update time of the caller's copy, '' for none

  Output:
    {pending}, {pending, version} or {pending, version, JSON}, see includes/readProfileFresh.lua
]]
--- @include "readProfileFresh"

return readProfileFresh(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
