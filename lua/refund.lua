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
-- never before now). Each algorithm gives back in its own script's "refund" mode
-- (lua/NAME.lua); `cluster_refunds` lists those the algorithm table promises one of
-- (policy::algorithm_table), and the build fails when one of them has no such mode.
--@algorithms
--@args_per_check
--@cluster_refunds

local n = #KEYS
if n == 0 or #ARGV ~= args_per_check * n then
  return redis.error_reply('refund: expected ' .. args_per_check .. ' arguments per key')
end

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local replies = {}
local now_s = string.format('%.0f', now)
for i = 1, n do
  local o = args_per_check * (i - 1)
  local name = ARGV[o + 1]
  local run = algorithms[name]
  if not cluster_refunds[name] or not run then
    return redis.error_reply('refund: no refund for algorithm ' .. tostring(name))
  end
  run({KEYS[i]}, {ARGV[o + 2], ARGV[o + 3], ARGV[o + 4], ARGV[o + 5], ARGV[o + 6], 'refund', now_s})
  replies[i] = run({KEYS[i]}, {ARGV[o + 2], ARGV[o + 3], ARGV[o + 4], ARGV[o + 5], ARGV[o + 6], 'peek', now_s})
end
return replies
