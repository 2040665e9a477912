-- fixed_window.lua: at most `limit` units per window; the window opens at its first check.
--
-- KEYS[1]  the counter: units admitted in the current window
-- ARGV[1]  limit      units per window
-- ARGV[2]  window_ms  window length in milliseconds
-- ARGV[3]  burst      unused (equals limit)
-- ARGV[4]  cost       units this check takes (1..limit)
-- ARGV[5]  unused
-- ARGV[6]  "peek" to report the state without changing it (cost is then 0)
-- Returns {allowed(0|1), limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}.
--
-- The key's TTL is the end of the window. INCRBY keeps an existing TTL, so only a new
-- counter gets PEXPIRE; a denied check neither increments nor extends the window.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[4])
local peek = ARGV[6] == 'peek'
if peek then cost = 0 end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local current = redis.call('GET', KEYS[1])
local count = 0
if current then count = tonumber(current) end

local allowed = 0
if count + cost <= limit then
  allowed = 1
  if not peek then count = redis.call('INCRBY', KEYS[1], cost) end
end

local ttl = 0
if count > 0 then
  ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 and not peek then -- a new window (or a counter that lost its TTL: never leave one without)
    redis.call('PEXPIRE', KEYS[1], window)
    ttl = window
  end
end

if ttl < 0 then ttl = 0 end
local reset_ms = now + ttl
local reset_after = math.ceil(ttl / 1000)
local retry_after = 0
if allowed == 0 then retry_after = math.max(1, reset_after) end
return {allowed, limit, limit - count, math.ceil(reset_ms / 1000), retry_after, reset_after, reset_ms - now}
