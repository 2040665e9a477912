-- multi.lua: several limits decided as one: each admits its cost and all are charged, or
-- none is charged.
--
-- KEYS[i]  the key of limit i (all distinct)
-- ARGV     args_per_check values per limit, limit i at ARGV[args_per_check*(i-1)+1 ..]: the
--          algorithm's name (a policy::Algorithm), then that algorithm's own ARGV[1..5]:
--          limit, window_ms, burst, cost, member, then the mode: '' to check,
--          'report:<max_debt>' to charge without asking (the script's ARGV[6];
--          script_args.hpp writes them all)
-- Returns one reply per limit, in order, each exactly what the algorithm's script returns.
--
-- The build (cmake/embed_lua.cmake, --@algorithms) pastes every policy::Algorithm's script
-- in below as a function of (KEYS, ARGV), so every number comes from the same code as a
-- single check.
-- Phase 1 peeks every limit (writes nothing). A limit fits when the peek's remaining >= cost,
-- which is exactly each script's admit test (token bucket and GCRA: floor(level / window)
-- >= cost <=> level >= cost * window for a whole cost; sliding window: remaining is the
-- floor of what fits, so remaining >= cost <=> the weighted count plus cost fits; the others:
-- limit - count >= cost).
-- Phase 2: when all fit, each script runs for real and admits (nothing changed in between,
-- and time only adds capacity). Otherwise only the misfits run for real, and a denied check
-- writes nothing; the others answer with their peek (allowed, state unchanged).
--
-- A report (POST /v1/report) asks nothing: every limit of it is charged, each by its
-- script's report mode, and none is peeked.
-- The keys of one call may hash to different Redis Cluster slots: layered limits need a
-- single Redis (or keys sharing a hash tag).
--@algorithms
--@args_per_check

local n = #KEYS
if n == 0 or #ARGV ~= args_per_check * n then
  return redis.error_reply('multi: expected ' .. args_per_check .. ' arguments per key')
end

-- One instant for every limit of the call: TIME read once, handed to each script as ARGV[7]
-- (ARGV[6] the mode when not peeking).
local time = redis.call('TIME')
local now = string.format('%.0f', tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))

local runs, args, replies, fits = {}, {}, {}, {}
local all_fit = true
for i = 1, n do
  local o = args_per_check * (i - 1)
  runs[i] = algorithms[ARGV[o + 1]]
  if not runs[i] then
    return redis.error_reply('multi: unknown algorithm ' .. tostring(ARGV[o + 1]))
  end
  args[i] = {ARGV[o + 2], ARGV[o + 3], ARGV[o + 4], ARGV[o + 5], ARGV[o + 6], ARGV[o + 7], now}
  if string.sub(ARGV[o + 7], 1, 6) == 'report' then
    fits[i] = false -- runs for real below, whatever the others do
  else
    replies[i] = runs[i]({KEYS[i]}, {args[i][1], args[i][2], args[i][3], args[i][4], args[i][5], 'peek', now})
    fits[i] = replies[i][3] >= tonumber(args[i][4])
    all_fit = all_fit and fits[i]
  end
end

for i = 1, n do
  if all_fit or not fits[i] then
    replies[i] = runs[i]({KEYS[i]}, args[i])
  end
end
return replies
