-- batch.lua: many independent checks in one call (coalescing), decided one after another in
-- the order they arrived, each exactly as its algorithm's own script decides it alone.
--
-- KEYS[i]  the key of check i (a key may repeat: later checks see earlier ones' charges)
-- ARGV     the numbers of each policy once, then each check by reference to its policy
--          (script_args.hpp and batch_args.hpp write them all):
--          ARGV[1]  p, how many policies (groups of numbers) follow
--          then args_per_policy values per policy j (1-based): the algorithm's name (a
--          policy::Algorithm), then that algorithm's own ARGV[1..3]: limit, window_ms, burst
--          then args_per_batch_check values per check i: its policy's index j (1..p), then the
--          algorithm's ARGV[4..6]: cost, member, and the mode ('' to check, 'report:<max_debt>'
--          to charge without asking)
--          After the checks' arguments, optionally, pairs (check index, thresholds) for the checks
--          of policies with quota webhooks: see lua/notify/crossings.lua (none: no pair, and
--          nothing more is done)
-- Returns one flat array: Redis's time in ms (the batch's one instant), then reply_per_check
--          values per check i, in order: allowed (0|1), remaining, reset_after_ms; then, for each check whose
--          reply has more (a quota webhook's claimed crossings, lua/notify/crossings.lua): i, how
--          many values, those values. A check's Redis error takes its allowed's place (an error
--          reply inside the array; its two others are 0): it fails that check alone. A READONLY
--          error (a replica) fails the whole call instead.
--          The rest of what the algorithm's script returns is derived by the sidecar exactly as
--          every script computes it (store/redis/flat_reply.cpp): limit is the policy's,
--          reset_epoch_s = ceil((time + reset_after_ms) / 1000), reset_after_s =
--          ceil(reset_after_ms / 1000), retry_after_s = max(1, reset_after_s) when denied, else 0.
--
-- Redis pays its per-call cost (argument parsing, script lookup, the Lua call) once per
-- batch instead of once per check; that is how coalescing goes past per-check EVALSHA. A
-- policy's numbers are sent (and parsed, and validated) once per batch, not once per check, and
-- the flat reply is one array of integers, not an array of arrays.
-- The build (cmake/embed_lua.cmake, --@algorithms) pastes every policy::Algorithm's script
-- in below as a function of (KEYS, ARGV). Every argument group is checked before anything runs,
-- so a malformed batch charges nothing; a Redis error in one check (pcall) does not undo or fail
-- the others.
-- On Redis Cluster a batch must only hold keys of one node; ratelimitd batches per
-- connection, and a connection talks to one node.
--@algorithms
--@batch_layout
--@notify

local n = #KEYS
local policies = tonumber(ARGV[1])
if n == 0 then return redis.error_reply('batch: no keys') end
if not policies or policies < 1 or policies ~= math.floor(policies) then
  return redis.error_reply('batch: ARGV[1] must be the number of policies (1 or more), not ' .. tostring(ARGV[1]))
end
local checks_from = 2 + args_per_policy * policies
local pairs_from = checks_from + args_per_batch_check * n
if #ARGV < pairs_from - 1 or (#ARGV - pairs_from + 1) % 2 ~= 0 then
  return redis.error_reply('batch: expected 1 + ' .. args_per_policy .. ' arguments per policy + ' ..
                           args_per_batch_check .. ' per key, then pairs')
end

local runs = {}
for j = 1, policies do
  local o = 2 + args_per_policy * (j - 1)
  runs[j] = algorithms[ARGV[o]]
  if not runs[j] then return redis.error_reply('batch: policy ' .. j .. ': unknown algorithm ' .. tostring(ARGV[o])) end
  if not (tonumber(ARGV[o + 1]) and tonumber(ARGV[o + 2]) and tonumber(ARGV[o + 3])) then
    return redis.error_reply('batch: policy ' .. j .. ': limit, window_ms and burst must be numbers')
  end
end
local policy_of = {}
for i = 1, n do
  local o = checks_from + args_per_batch_check * (i - 1)
  local j = tonumber(ARGV[o])
  if not j or not runs[j] then
    return redis.error_reply('batch: check ' .. i .. ': no policy ' .. tostring(ARGV[o]) .. ' (1..' .. policies .. ')')
  end
  if not tonumber(ARGV[o + 1]) then return redis.error_reply('batch: check ' .. i .. ': cost must be a number') end
  policy_of[i] = j
end
local thresholds = {}
for k = pairs_from, #ARGV, 2 do thresholds[tonumber(ARGV[k])] = ARGV[k + 1] end

-- One instant for the whole batch: TIME read once, handed to each script as ARGV[7].
local time = redis.call('TIME')
local now_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local now = string.format('%.0f', now_ms)

local flat = {now_ms}
local more = {} -- the checks' extra values, after every check's three
for i = 1, n do
  local p = 2 + args_per_policy * (policy_of[i] - 1)
  local o = checks_from + args_per_batch_check * (i - 1)
  local mode = ARGV[o + 3]
  local ok, reply = pcall(runs[policy_of[i]], {KEYS[i]},
                          {ARGV[p + 1], ARGV[p + 2], ARGV[p + 3], ARGV[o + 1], ARGV[o + 2], mode, now})
  if ok and type(reply) ~= 'table' then ok, reply = false, 'batch: check ' .. i .. ': the script replied nothing' end
  local at = reply_per_check * (i - 1) + 2
  if ok then
    if thresholds[i] and mode == '' then
      -- a failed claim costs the event, never the check
      pcall(notify_crossings, KEYS[i], ARGV[p], tonumber(ARGV[p + 2]), tonumber(ARGV[o + 1]), thresholds[i],
            reply, now_ms)
    end
    flat[at], flat[at + 1], flat[at + 2] = reply[1], reply[3], reply[7]
    if #reply > 7 then
      more[#more + 1] = i
      more[#more + 1] = #reply - 7
      for k = 8, #reply do more[#more + 1] = reply[k] end
    end
  else
    -- redis.call raises a table {err = "..."}; a Lua error is a string.
    local message = type(reply) == 'table' and reply.err or tostring(reply)
    -- A replica (a demoted primary) refuses every write: the whole call fails as a single
    -- script's would, so the sidecar sees the demotion (and nothing was charged here).
    if string.find(message, 'READONLY', 1, true) then return redis.error_reply(message) end
    flat[at], flat[at + 1], flat[at + 2] = redis.error_reply(message), 0, 0
  end
end
for k = 1, #more do flat[#flat + 1] = more[k] end
return flat
