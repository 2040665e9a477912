-- fixed_window.lua: at most `limit` units per window; the window opens at its first check.
--
-- KEYS[1]  the counter: units admitted in the current window
-- ARGV[1]  limit      units per window
-- ARGV[2]  window_ms  window length in milliseconds
-- ARGV[3]  burst      unused (equals limit)
-- ARGV[4]  cost       units this check takes (1..limit)
-- ARGV[5]  unused
-- ARGV[6]  "peek" to report the state without changing it (cost is then 0)
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed(0|1), limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}.
--
-- The key's TTL is the end of the window. INCRBY keeps an existing TTL, so only a new
-- counter gets PEXPIRE; a denied check neither increments nor extends the window. After a
-- reload the count carries over: a lower limit applies to it at once, a shorter window caps
-- the TTL to the new window (even on a denied check), a longer one starts with the next
-- window.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[4])
local peek = ARGV[6] == 'peek'
if peek then cost = 0 end

-- Redis TIME, or the instant multi.lua / batch.lua read once for every check of their call
local now = tonumber(ARGV[7])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- A key another algorithm wrote (the policy changed algorithm on reload) is no counter:
-- the window starts afresh, replacing it.
local kind = redis.call('TYPE', KEYS[1]).ok
local current = nil
if kind == 'string' then current = string.match(redis.call('GET', KEYS[1]), '^%d+$') end
local foreign = kind ~= 'none' and not current
local count = 0
if current then count = tonumber(current) end

local allowed = 0
if count + cost <= limit then
  allowed = 1
  if not peek then
    if foreign then redis.call('DEL', KEYS[1]) end
    count = redis.call('INCRBY', KEYS[1], cost)
  end
end

local ttl = 0
if count > 0 then
  ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 and not peek then -- a new window (or a counter that lost its TTL: never leave one without)
    redis.call('PEXPIRE', KEYS[1], window)
    ttl = window
  elseif ttl > window then -- the window was shortened on reload: it ends within the new one
    if not peek then redis.call('PEXPIRE', KEYS[1], window) end
    ttl = window
  end
end

if ttl < 0 then ttl = 0 end
local reset_ms = now + ttl
local reset_after = math.ceil(ttl / 1000)
local retry_after = 0
if allowed == 0 then retry_after = math.max(1, reset_after) end
return {allowed, limit, math.max(0, limit - count), math.ceil(reset_ms / 1000), retry_after, reset_after, reset_ms - now}
