-- batch.lua: many independent checks in one call (coalescing), decided one after another in
-- the order they arrived, each exactly as its algorithm's own script decides it alone.
--
-- KEYS[i]  the key of check i (a key may repeat: later checks see earlier ones' charges)
-- ARGV     args_per_check values per check, check i at ARGV[args_per_check*(i-1)+1 ..]: the
--          algorithm's name (a policy::Algorithm), then that algorithm's own ARGV[1..5]:
--          limit, window_ms, burst, cost, member, then the mode: '' to check,
--          'report:<max_debt>' to charge without asking (the script's ARGV[6];
--          script_args.hpp writes them all)
--          After the checks' arguments, optionally, pairs (check index, thresholds) for the checks
--          of policies with quota webhooks: see lua/notify/crossings.lua (none: no pair, and
--          nothing more is done)
-- Returns one reply per check, in order: what the algorithm's script returns, or an error
-- reply for that check alone; a READONLY error (a replica) fails the whole call instead.
--
-- Redis pays its per-call cost (argument parsing, script lookup, the Lua call) once per
-- batch instead of once per check; that is how coalescing goes past per-check EVALSHA.
-- The build (cmake/embed_lua.cmake, --@algorithms) pastes every policy::Algorithm's script
-- in below as a function of (KEYS, ARGV). Every argument group is checked before anything runs, so a malformed
-- batch charges nothing; a Redis error in one check (pcall) does not undo or fail the others.
-- On Redis Cluster a batch must only hold keys of one node; ratelimitd batches per
-- connection, and a connection talks to one node.
--@algorithms
--@args_per_check
--@notify

local n = #KEYS
local pairs_from = args_per_check * n + 1
if n == 0 or #ARGV < args_per_check * n or (#ARGV - args_per_check * n) % 2 ~= 0 then
  return redis.error_reply('batch: expected ' .. args_per_check .. ' arguments per key')
end
local thresholds = {}
for j = pairs_from, #ARGV, 2 do thresholds[tonumber(ARGV[j])] = ARGV[j + 1] end

local runs = {}
for i = 1, n do
  runs[i] = algorithms[ARGV[args_per_check * (i - 1) + 1]]
  if not runs[i] then
    return redis.error_reply('batch: unknown algorithm ' .. tostring(ARGV[args_per_check * (i - 1) + 1]))
  end
end

-- One instant for the whole batch: TIME read once, handed to each script as ARGV[7].
local time = redis.call('TIME')
local now = string.format('%.0f', tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000))

local replies = {}
for i = 1, n do
  local o = args_per_check * (i - 1)
  local ok, reply = pcall(runs[i], {KEYS[i]},
                          {ARGV[o + 2], ARGV[o + 3], ARGV[o + 4], ARGV[o + 5], ARGV[o + 6], ARGV[o + 7], now})
  if ok then
    replies[i] = reply
    if thresholds[i] and ARGV[o + 7] == '' then
      -- a failed claim costs the event, never the check
      pcall(notify_crossings, KEYS[i], ARGV[o + 1], tonumber(ARGV[o + 3]), tonumber(ARGV[o + 5]), thresholds[i],
            reply, tonumber(now))
    end
  else
    -- redis.call raises a table {err = "..."}; a Lua error is a string.
    local message = type(reply) == 'table' and reply.err or tostring(reply)
    -- A replica (a demoted primary) refuses every write: the whole call fails as a single
    -- script's would, so the sidecar sees the demotion (and nothing was charged here).
    if string.find(message, 'READONLY', 1, true) then return redis.error_reply(message) end
    replies[i] = redis.error_reply(message)
  end
end
return replies
