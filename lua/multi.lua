-- multi.lua: several limits decided as one: each admits its cost and all are charged, or
-- none is charged.
--
-- KEYS[i]  the key of limit i (all distinct)
-- ARGV     args_per_check values per limit, limit i at ARGV[args_per_check*(i-1)+1 ..]: the
--          algorithm's name (a policy::Algorithm), then that algorithm's own ARGV[1..5]:
--          limit, window_ms, burst, cost, member, then the mode: '' to check,
--          'report:<max_debt>' to charge without asking (the script's ARGV[6]),
--          'ask' to check without charging (cost 0), 'charge' to charge whatever the others
--          do (policy::Part; script_args.hpp writes them all)
--          After the limits' arguments, optionally, pairs (limit index, thresholds) for the limits
--          of policies with quota webhooks (lua/notify/crossings.lua): a limit that ran for real
--          (not a report, not an ask, not one left unchanged because another denied) is tested;
--          a report's pair holds its thresholds and debt bound ("u1,...;debt:<units>",
--          notify_report)
-- Returns one reply per limit, in order, each exactly what the algorithm's script returns
-- (an 'ask': its peek, denied when nothing is left).
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
-- script's report mode, and none is peeked. A 'charge' limit runs for real like a report,
-- whatever the others do, but its own verdict stands (envoyproxy/ratelimit's accounting: its
-- script charges even past the limit). An 'ask' limit (an Envoy descriptor's hits_addend 0)
-- is only peeked: it fits while at least one unit is left, never runs for real, and a misfit
-- denies the call like any other (so one call asks every such limit, atomically with the rest).
-- The keys of one call may hash to different Redis Cluster slots: layered limits need a
-- single Redis (or keys sharing a hash tag).
--@algorithms
--@args_per_check
--@notify

local n = #KEYS
if n == 0 or #ARGV < args_per_check * n or (#ARGV - args_per_check * n) % 2 ~= 0 then
  return redis.error_reply('multi: expected ' .. args_per_check .. ' arguments per key')
end
local thresholds = {}
for j = args_per_check * n + 1, #ARGV, 2 do thresholds[tonumber(ARGV[j])] = ARGV[j + 1] end

-- One instant for every limit of the call: TIME read once, handed to each script as ARGV[7]
-- (ARGV[6] the mode when not peeking).
local time = redis.call('TIME')
local now = string.format('%.0f', tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))

local runs, args, replies, fits, asks = {}, {}, {}, {}, {}
local all_fit = true
for i = 1, n do
  local o = args_per_check * (i - 1)
  runs[i] = algorithms[ARGV[o + 1]]
  if not runs[i] then
    return redis.error_reply('multi: unknown algorithm ' .. tostring(ARGV[o + 1]))
  end
  args[i] = {ARGV[o + 2], ARGV[o + 3], ARGV[o + 4], ARGV[o + 5], ARGV[o + 6], ARGV[o + 7], now}
  local mode = ARGV[o + 7]
  asks[i] = mode == 'ask'
  if string.sub(mode, 1, 6) == 'report' or mode == 'charge' then
    fits[i] = false -- runs for real below, whatever the others do
  else
    replies[i] = runs[i]({KEYS[i]}, {args[i][1], args[i][2], args[i][3], args[i][4], args[i][5], 'peek', now})
    if asks[i] then
      fits[i] = replies[i][3] >= 1
      if not fits[i] then
        replies[i][1] = 0
        replies[i][5] = math.max(1, replies[i][6])
      end
    else
      fits[i] = replies[i][3] >= tonumber(args[i][4])
    end
    all_fit = all_fit and fits[i]
  end
end

for i = 1, n do
  local mode = args[i][6]
  if not asks[i] and (all_fit or not fits[i]) then
    -- a report's script also returns the debt it left, in units (notify_report)
    local debt
    replies[i], debt = runs[i]({KEYS[i]}, args[i])
    if thresholds[i] and (mode == '' or mode == 'charge') then
      -- a failed claim costs the event, never the check
      pcall(notify_crossings, KEYS[i], ARGV[args_per_check * (i - 1) + 1], tonumber(args[i][2]), tonumber(args[i][4]),
            thresholds[i], replies[i], tonumber(now))
    elseif thresholds[i] and string.sub(mode, 1, 6) == 'report' then
      pcall(notify_report, KEYS[i], ARGV[args_per_check * (i - 1) + 1], tonumber(args[i][2]), tonumber(args[i][4]),
            thresholds[i], replies[i], debt, tonumber(now))
    end
  end
end
return replies
