--[[
  The limiter's clock and window, shared by its two scripts (docs/adr/0005-rate-limiter.md).

  WINDOW_MICROS
    the per-second limit's window in µs. shared/limits/sliding-window.ts turns the log into
    headers with its own WINDOW_MICROS: the two must stay equal (a unit test compares them).

  clockMicros(injected)
    injected  the caller's time in epoch µs, or '' to use Redis server time
    Returns the time in epoch µs: the injected one (tests inject a clock), else Redis TIME,
    which every API instance shares whatever its host's clock says.
]]
local WINDOW_MICROS = 1000000

local function clockMicros(injected)
  local now = tonumber(injected)
  if now then return now end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end
