--[[
  cosReserveSignIn (dashboard/auth/sign-in-throttle.ts): reserves one sign-in attempt in every
  set of KEYS, or in none (docs/adr/0017-sign-in-throttle.md). Each set holds the attempts of
  the last window (score: epoch ms), failed ones and ones still being verified. Its file name
  carries no key count: the caller passes the count first (one set for a device, two for an
  email and a client address).

  Input:
    KEYS[1..n] the attempt sets of the attempt's subjects (an email and a client address, or a
               device)

    ARGV[1] now (epoch ms)
    ARGV[2] the window (ms)
    ARGV[3] the limit of attempts per set and window
    ARGV[4] this attempt's member

  Output:
    0 when reserved, else the ms until the fullest set lets an attempt in again
]]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local wait = 0
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  if redis.call('ZCARD', KEYS[i]) >= limit then
    local entry = redis.call('ZREVRANGE', KEYS[i], limit - 1, limit - 1, 'WITHSCORES')
    local free = tonumber(entry[2]) + window - now
    if free > wait then wait = free end
  end
end
if wait > 0 then return wait end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[i], window)
end
return 0
