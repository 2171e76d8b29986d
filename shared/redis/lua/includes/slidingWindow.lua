--[[
  The limiter's clock, window and log, shared by its two scripts (docs/adr/0005-rate-limiter.md).

  WINDOW_MICROS
    the per-second limit's window in µs. shared/limits/sliding-window.ts turns the log into
    headers with its own WINDOW_MICROS: the two must stay equal (a unit test compares them).

  clockMicros(injected)
    injected  the caller's time in epoch µs, or '' to use Redis server time
    Returns the time in epoch µs: the injected one (tests inject a clock), else Redis TIME,
    which every API instance shares whatever its host's clock says.

  dropBefore(logKey, since)
    logKey  a key's log: a list of admission times (epoch µs), oldest first
    since   drops the entries at or before this time
    Returns the oldest entry left (a number), or nil when none is. Admissions are appended at
    the script's time, so the list is in time order, but for a lease's slots, dated up to a
    lease's lifetime ahead, and for a server clock that steps back: an entry older than one
    before it is dropped only once the ones before it are. It counts a little longer, and the
    limit never admits more.

  append(logKey, now)
    Appends an admission at `now` (epoch µs) and keeps the log alive while its entries count.

  appendLeased(logKey, at, count)
    Appends `count` admissions dated `at` (epoch µs): a lease's slots, dated when the lease ends
    (leaseAdmissions-4.lua), so that each counts for at least the second after its use.

  removeLeased(logKey, at, count)
    Removes `count` entries dated `at`: a lease's unused slots, once the lease has ended. They
    were appended after most of the log's entries, so the search starts at its tail.

  The log's writes are unlogged (includes/unlogged.lua): it holds one second of admissions, and
  a Redis that restarts or fails over without it admits at most one more limit's worth in the
  second that follows.
]]
--- @include "renewLifetime"
--- @include "unlogged"

local WINDOW_MICROS = 1000000

local function clockMicros(injected)
  local now = tonumber(injected)
  if now then return now end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- A key's log expires LOG_LEAST_MS to LOG_LEAST_MS + LOG_RENEWAL_MS after its last admission
-- (real time): by then every entry is older than the window, and an idle key costs no memory.
-- Renewed about once a second for a busy key (includes/renewLifetime.lua).
local LOG_LEAST_MS = 4000
local LOG_RENEWAL_MS = 1000

-- Old entries are read and popped in chunks that double, from DROP_FIRST: a request's call
-- drops one or two, a lease's call the hundreds admitted a second before it.
local DROP_FIRST = 4

local function dropBefore(logKey, since)
  unlogged()
  local oldest = tonumber(redis.call('LINDEX', logKey, 0))
  local chunk = DROP_FIRST
  while oldest and oldest <= since do
    local head = redis.call('LRANGE', logKey, 0, chunk - 1)
    local old = 1
    while old < #head and tonumber(head[old + 1]) <= since do old = old + 1 end
    redis.call('LPOP', logKey, old)
    if old < #head then
      oldest = tonumber(head[old + 1])
    else
      oldest = tonumber(redis.call('LINDEX', logKey, 0))
      chunk = chunk * 2
    end
  end
  logged()
  return oldest
end

local function append(logKey, now)
  unlogged()
  redis.call('RPUSH', logKey, now)
  renewLifetime(logKey, LOG_LEAST_MS, LOG_RENEWAL_MS)
  logged()
end

-- unpack() passes its values on Lua's C stack, which holds 8,000: slots go in chunks.
local LEASED_CHUNK = 1000

local function appendLeased(logKey, at, count)
  unlogged()
  local chunk = {}
  for i = 1, math.min(count, LEASED_CHUNK) do chunk[i] = at end
  local left = count
  while left > 0 do
    local n = math.min(left, LEASED_CHUNK)
    redis.call('RPUSH', logKey, unpack(chunk, 1, n))
    left = left - n
  end
  renewLifetime(logKey, LOG_LEAST_MS, LOG_RENEWAL_MS)
  logged()
end

local function removeLeased(logKey, at, count)
  unlogged()
  redis.call('LREM', logKey, -count, at)
  logged()
end
