-- refund.lua: gives back what one slot group of a layered check charged on a Redis Cluster,
-- when a later slot group denied (src/store/redis/cluster/cross_slot_check.cpp). Then
-- reports each limit's state after it, as its algorithm's peek does.
--
-- KEYS[i]  the key of limit i (all in one hash slot)
-- ARGV     args_per_check values per limit, as lua/multi.lua takes them (algorithm, limit,
--          window_ms, burst, cost, member), with the member slot holding what identifies
--          the charge: sliding_log: the member sent (its entry's id);
--          concurrency: the lease sent; fixed_window: the charge's reset_after_ms; token
--          bucket, GCRA: unused.
-- Returns one reply per limit, in order: the algorithm's peek after the refund.
--
-- A refund never gives back more than its charge took, and gives back nothing when it cannot
-- tell the charge apart (the numbers changed on reload, a fixed window rolled over since):
-- then the charge stays until time repays it, which can only deny, never admit too much.
-- Each refund is bounded by what a full state holds (a bucket never above its burst, a TAT
-- never before now).
--@algorithms
--@args_per_check

local n = #KEYS
if n == 0 or #ARGV ~= args_per_check * n then
  return redis.error_reply('refund: expected ' .. args_per_check .. ' arguments per key')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local refunds = {}

-- The counter of the same window: its TTL only shrinks, and a new window (opened after the
-- charge's ended) has more TTL left than the charge saw, unless a whole window passed (the
-- sidecar refunds within one window).
refunds.fixed_window = function(key, limit, window, burst, cost, member)
  if redis.call('TYPE', key).ok ~= 'string' then return end
  local count = tonumber(string.match(redis.call('GET', key), '^%d+$') or '')
  local ttl = redis.call('PTTL', key)
  if count and count >= cost and ttl >= 0 and ttl <= tonumber(member) then redis.call('DECRBY', key, cost) end
end

-- Exactly the entry the charge added ("#<before>:<cost>:<member>", lua/sliding_log.lua), when it
-- is among the newest 16 (a refund follows its charge within one request): the entries after
-- it take its units out of their running totals. Else nothing is given back.
refunds.sliding_log = function(key, limit, window, burst, cost, member)
  if redis.call('TYPE', key).ok ~= 'zset' then return end
  local newest = redis.call('ZRANGE', key, -16, -1, 'WITHSCORES')
  local at = nil
  for i = 1, #newest, 2 do
    local units, id = string.match(newest[i], '^#%d+:(%d+):(.*)$')
    if id == member and tonumber(units) == cost then at = i end
  end
  if not at then return end
  redis.call('ZREM', key, newest[at])
  for i = at + 2, #newest, 2 do
    local before, rest = string.match(newest[i], '^#(%d+):(.*)$')
    if before then
      redis.call('ZREM', key, newest[i])
      redis.call('ZADD', key, newest[i + 1], '#' .. string.format('%016.0f', tonumber(before) - cost) .. ':' .. rest)
    end
  end
end

-- Exactly the lease the charge took.
refunds.concurrency = function(key, limit, window, burst, cost, member)
  if redis.call('TYPE', key).ok == 'zset' then redis.call('ZREM', key, member) end
end

-- The level at the last write plus the charge, never above the burst.
refunds.token_bucket = function(key, limit, window, burst, cost, member)
  if redis.call('TYPE', key).ok ~= 'hash' then return end
  local s = redis.call('HMGET', key, 'l', 't', 'w', 'b')
  if not s[1] or not s[2] or (tonumber(s[3]) or window) ~= window or (tonumber(s[4]) or burst) ~= burst then return end
  local level = math.min(burst * window, tonumber(s[1]) + cost * window)
  -- full again sooner: the TTL (time until full, from the last write) shrinks with it
  local ttl = tonumber(s[2]) + math.ceil((burst * window - level) / limit) - now
  if ttl <= 0 then
    redis.call('DEL', key)
    return
  end
  redis.call('HSET', key, 'l', string.format('%.0f', level))
  redis.call('PEXPIRE', key, ttl)
end

-- The TAT moved back by the charge, never before now (then nothing is owed: the key goes).
refunds.gcra = function(key, limit, window, burst, cost, member)
  if redis.call('TYPE', key).ok ~= 'string' then return end
  local ms, f, was_limit, was_window = string.match(redis.call('GET', key), '^(%d+):(%d+):(%d+):(%d+)$')
  if not ms or tonumber(was_limit) ~= limit or tonumber(was_window) ~= window then return end
  local ahead = tonumber(ms) - now
  if ahead < 0 then return end
  local owed = ahead * limit + tonumber(f) - cost * window
  if owed <= 0 then
    redis.call('DEL', key)
    return
  end
  redis.call('SET', key, string.format('%.0f', now + math.floor(owed / limit)) .. ':' ..
             string.format('%.0f', owed % limit) .. ':' .. string.format('%.0f', limit) .. ':' ..
             string.format('%.0f', window), 'PX', math.ceil(owed / limit))
end

local replies = {}
local now_s = string.format('%.0f', now)
for i = 1, n do
  local o = args_per_check * (i - 1)
  local name = ARGV[o + 1]
  local refund, run = refunds[name], algorithms[name]
  if not refund or not run then
    return redis.error_reply('refund: no refund for algorithm ' .. tostring(name))
  end
  refund(KEYS[i], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4]), tonumber(ARGV[o + 5]),
         ARGV[o + 6])
  replies[i] = run({KEYS[i]}, {ARGV[o + 2], ARGV[o + 3], ARGV[o + 4], ARGV[o + 5], ARGV[o + 6], 'peek', now_s})
end
return replies
