-- sliding_log.lua: at most `limit` units in any window of `window_ms`, one log entry per unit.
--
-- KEYS[1]  the log: a sorted set, one member per admitted unit, scored by ms admitted
-- ARGV[1]  limit      units per window
-- ARGV[2]  window_ms  window length in milliseconds
-- ARGV[3]  burst      unused (equals limit)
-- ARGV[4]  cost       units this check takes (1..limit)
-- ARGV[5]  member     unique per check across every sidecar (instance id + counter);
--                     ":<i>" is appended per unit, so two checks in the same
--                     millisecond never collapse into one member
-- ARGV[6]  "peek" to report the state without changing it (cost is then 0); "report" to
--          log `cost` units without asking (the log may pass the limit: a debt repaid as the
--          entries leave the window). No refunds: the log cannot tell which members to take
--          back, so the planner refuses a negative report on a sliding log (a negative cost
--          here logs nothing)
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed(0|1), limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}.
--
-- An entry scored s is inside the window while s > now - window_ms. A denied check only
-- reads. The TTL is the window: the newest entry leaves the window when the key expires.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[4])
local member = ARGV[5]
local peek = ARGV[6] == 'peek'
local report = ARGV[6] == 'report'
if peek or cost < 0 then cost = 0 end

-- Redis TIME, or the instant multi.lua / batch.lua read once for every check of their call
local now = tonumber(ARGV[7])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local now_s = string.format('%.0f', now)
local after = '(' .. string.format('%.0f', now - window) -- exclusive lower bound

-- A key another algorithm wrote (the policy changed algorithm on reload) counts as an empty
-- log and is replaced on the first admitted check. A changed window needs nothing: the log
-- holds when each unit was admitted.
local kind = redis.call('TYPE', KEYS[1]).ok
local foreign = kind ~= 'none' and kind ~= 'zset'
local count = 0
if not foreign then count = redis.call('ZCOUNT', KEYS[1], after, '+inf') end

local allowed, nth
if peek then
  allowed = 1
  nth = 1
elseif report or count + cost <= limit then
  allowed = 1
  if foreign then
    redis.call('DEL', KEYS[1])
    foreign = false
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now - window))
  -- ZADD in chunks: unpack() of a very long table overflows the Lua C stack
  local args = {}
  for i = 1, cost do
    args[#args + 1] = now_s
    args[#args + 1] = member .. ':' .. i
    if #args >= 1000 or i == cost then
      redis.call('ZADD', KEYS[1], unpack(args))
      args = {}
    end
  end
  redis.call('PEXPIRE', KEYS[1], window)
  count = count + cost
  nth = 1 -- reset: when the oldest entry leaves the window
  -- in debt (a report): when enough entries have left for one unit to fit
  if count >= limit then nth = count - limit + 1 end
else
  allowed = 0
  nth = count + cost - limit -- reset: when enough entries have left for `cost` to fit
end

local entry = {}
if not foreign then
  entry = redis.call('ZRANGEBYSCORE', KEYS[1], after, '+inf', 'WITHSCORES', 'LIMIT', nth - 1, 1)
end
local reset_ms = now -- an empty window (only when peeking) resets now
if entry[2] then reset_ms = tonumber(entry[2]) + window end
local reset_after = math.ceil((reset_ms - now) / 1000)
local retry_after = 0
if allowed == 0 then retry_after = math.max(1, reset_after) end
return {allowed, limit, math.max(0, limit - count), math.ceil(reset_ms / 1000), retry_after, reset_after, reset_ms - now}
