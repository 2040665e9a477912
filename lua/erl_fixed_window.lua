-- erl_fixed_window.lua: envoyproxy/ratelimit's fixed window on its own Redis keys
-- (envoy_key_layout: envoyproxy-ratelimit), counted as its pods count, so that they and
-- ratelimitd share one budget during a rolling swap (docs/envoy.md, "Sharing
-- envoyproxy/ratelimit's keys").
--
-- KEYS[1]  the counter: CACHE_KEY_PREFIX + domain + "_" + key "_" value "_" ... + window
--          start, the window start from the sidecar's clock as envoyproxy/ratelimit takes it
--          (policy/rls_planner.cpp); the window lives in the key's name, not in its TTL
-- ARGV[1]  limit      requests_per_unit
-- ARGV[2]  window_ms  the unit in milliseconds (its seconds as envoyproxy/ratelimit divides
--                     time: a month is 30 days, a year 365)
-- ARGV[3]  burst      unused
-- ARGV[4]  cost       hits_addend (0: asks without charging, over only past the limit)
-- ARGV[5]  the key's TTL in seconds: the unit's plus a jitter drawn for this call
--          (EXPIRATION_JITTER_MAX_SECONDS; store/redis/script_args.cpp)
-- ARGV[6]  '' or 'charge': INCRBY cost, then EXPIRE, past the limit too (what its pods
--          do); "report:<max_debt>" the same, always admitted; "peek": read only. The
--          remaining it answers may be negative (how far past the limit), so that
--          lua/multi.lua's fit test (remaining >= cost) is envoyproxy/ratelimit's
--          (count + hits_addend > limit is over)
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed(0|1), limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}, and second the units owed past the limit (the debt): allowed when the
--          count after the charge is within the limit
--          (envoyproxy/ratelimit's OVER_LIMIT is count > limit); the reset is the window's end.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5]) or math.floor(window / 1000)
local mode = ARGV[6] or ''
local key = KEYS[1]

local now = tonumber(ARGV[7])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

local count
if mode == 'peek' then
  count = tonumber(redis.call('GET', key) or '0') or 0
else
  count = tonumber(redis.call('INCRBY', key, cost))
  redis.call('EXPIRE', key, ttl)
end

local allowed = 0
if count <= limit or string.sub(mode, 1, 6) == 'report' then allowed = 1 end
-- Negative past the limit, peeked or charged: how far past (verdict_reply.cpp reads it as the
-- check's past_limit, which envoyproxy/ratelimit's stats split a crossing call's hits by).
local remaining = limit - count
-- The window ends for everyone at once: the next multiple of the unit.
local reset_ms = (math.floor(now / window) + 1) * window
local reset_after = math.ceil((reset_ms - now) / 1000)
local retry_after = 0
if allowed == 0 then retry_after = math.max(1, reset_after) end
-- Second, the units owed past the limit (lua/notify/crossings.lua's notify_report reads a report's);
-- EVAL answers the first value only.
local debt_units = math.max(0, count - limit)
return {allowed, limit, remaining, math.ceil(reset_ms / 1000), retry_after, reset_after, reset_ms - now},
  debt_units
