-- gcra.lua: the generic cell rate algorithm (as redis-cell and go-redis/redis_rate): one
-- timestamp per key, the theoretical arrival time (TAT) of the next unit; `limit` units per
-- `window`, at most `burst` at once.
--
-- KEYS[1]  the TAT: a string "<ms>:<f>:<limit>:<window_ms>", TAT = ms + f / limit
--          (0 <= f < limit), with the numbers it was written under (a reload may change them)
-- ARGV[1]  limit      units per window (emission interval T = window_ms / limit)
-- ARGV[2]  window_ms  window in milliseconds
-- ARGV[3]  burst      capacity in units (tolerance = burst * T)
-- ARGV[4]  cost       units this check takes (1..burst); a report: units charged, negative
--                     to refund
-- ARGV[5]  for a policy with max_delay (or delay): ";delay:<queue>", a check may reserve
--          down to <queue> units below empty (the TAT up to now + burst * T + queue / limit),
--          admitted with the delay until it is due; else unused
-- ARGV[6]  "peek" to report the state without changing it (cost is then 0);
--          "report:<max_debt>" to charge `cost` without asking: the TAT may pass now + burst * T,
--          to now + (burst + max_debt) * T at most (a debt beyond the burst, repaid by time), a
--          refund stops at nothing owed. "report" alone: max_debt is the limit
--          "refund": give back one charge (lua/refund.lua; see below)
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed, limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}, and second the units owed past the limit (the debt). allowed: 0
--          denied, 1 admitted, 1 + d admitted after d ms (a reservation, ARGV[5]'s queue)
--
-- Time is counted in units of 1/limit ms, so T is exactly window_ms units and every number
-- is an integer (exact in a Lua double: burst * window_ms <= 2^53, which the config loader
-- guarantees). d = max(0, TAT - now) is how far the key is "in debt"; a check of `cost` is
-- admitted when d + cost * T <= burst * T, and then TAT = max(TAT, now) + cost * T. That is
-- the token bucket of token_bucket.lua with level = burst * T - d, so remaining and reset
-- mean the same (and have the same values). Redis TIME is the only clock. A denied check
-- writes nothing. The TTL is the time until the TAT is in the past: after that the missing
-- key means exactly the same thing (nothing owed, full burst).
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local mode = ARGV[6] or ''
local peek = mode == 'peek'
local queue = tonumber(string.match(ARGV[5] or '', '^;delay:(%d+)$') or 0)
if peek then queue = 0 end -- a peek reserves nothing
local report = string.sub(mode, 1, 6) == 'report'
-- "report:<max_debt>": the deepest debt the report may leave, in units (the policy's max_debt)
local max_debt = tonumber(string.match(mode, '^report:(%d+)$') or '') or limit
if peek then cost = 0 end

-- Redis TIME, or the instant multi.lua / batch.lua read once for every check of their call
local now = tonumber(ARGV[7])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- "refund" (lua/refund.lua, a layered check on a Redis Cluster whose later slot group denied):
-- give back what one charge of `cost` took, identified by ARGV[5], then reply nothing.
-- The TAT moved back by the charge, never before now (then nothing is owed: the key goes).
if mode == 'refund' then
  local key = KEYS[1]
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
  return
end

local capacity = burst * window
local need = cost * window
local debt = 0
-- A key another algorithm wrote (the policy changed algorithm on reload) counts as absent;
-- SET replaces it on the first admitted check.
local tat = nil
if redis.call('TYPE', KEYS[1]).ok == 'string' then tat = redis.call('GET', KEYS[1]) end
if tat then
  local ms, f, was_limit, was_window = string.match(tat, '^(%d+):(%d+):?(%d*):?(%d*)$')
  if ms then
    -- a TAT written before the numbers were kept along: this policy's numbers
    was_limit = tonumber(was_limit) or limit
    was_window = tonumber(was_window) or window
    local ahead = tonumber(ms) - now
    local owed = 0 -- in units of 1 / was_limit ms
    if ahead > 0 then
      -- (a TAT beyond now + burst * T only after the clock stepped back: the cap below owes
      -- at most everything)
      owed = ahead * was_limit + tonumber(f)
    elseif ahead == 0 then
      owed = tonumber(f)
    end
    if was_limit ~= limit or was_window ~= window then
      -- the numbers changed on reload: owe the same number of units, rounded up
      owed = math.ceil(owed / was_window * window)
    end
    -- Owed beyond the burst after a report's debt (or after the clock stepped back): kept, so
    -- the debt is repaid in full by time.
    debt = owed
  end
end

local level = capacity - debt
local allowed, reset_ms
if report then
  allowed = 1
  local owed = math.min(capacity + max_debt * window, math.max(0, debt + need))
  level = capacity - owed
  if owed == 0 then
    redis.call('DEL', KEYS[1]) -- nothing owed: the missing key means exactly that
  else
    local ms = now + math.floor(owed / limit)
    redis.call('SET', KEYS[1], string.format('%.0f', ms) .. ':' .. string.format('%.0f', owed % limit) .. ':' ..
               string.format('%.0f', limit) .. ':' .. string.format('%.0f', window), 'PX', math.ceil(owed / limit))
  end
  -- reset: when the next whole unit is usable (after the debt, if any)
  local tokens = math.max(0, math.floor(level / window))
  if tokens >= burst then
    reset_ms = now
  else
    reset_ms = now + math.ceil(((tokens + 1) * window - level) / limit)
  end
elseif level >= need then
  allowed = 1
  level = level - need
  if not peek then
    local owed = debt + need
    local ms = now + math.floor(owed / limit)
    redis.call('SET', KEYS[1], string.format('%.0f', ms) .. ':' .. string.format('%.0f', owed % limit) .. ':' ..
               string.format('%.0f', limit) .. ':' .. string.format('%.0f', window), 'PX', math.ceil(owed / limit))
  end
  -- reset: when the next whole unit is back
  local tokens = math.floor(level / window)
  if tokens >= burst then
    reset_ms = now -- nothing owed (only when peeking): nothing to wait for
  else
    reset_ms = now + math.ceil(((tokens + 1) * window - level) / limit)
  end
elseif queue > 0 and need - level <= queue then
  -- reserved: the TAT moves past the burst, so later checks queue after this one
  allowed = 1 + math.ceil((need - level) / limit)
  level = level - need
  local owed = debt + need
  redis.call('SET', KEYS[1], string.format('%.0f', now + math.floor(owed / limit)) .. ':' ..
             string.format('%.0f', owed % limit) .. ':' .. string.format('%.0f', limit) .. ':' ..
             string.format('%.0f', window), 'PX', math.ceil(owed / limit))
  -- reset: when the next whole unit is usable, after every reservation
  reset_ms = now + math.ceil((window - level) / limit)
else
  allowed = 0
  -- reset: when `cost` units (less the queue it may reserve) are back
  reset_ms = now + math.ceil((need - level - queue) / limit)
end

local remaining = math.max(0, math.floor(level / window))
local reset_after = math.ceil((reset_ms - now) / 1000)
local retry_after = 0
if allowed == 0 then retry_after = math.max(1, reset_after) end
-- Second, the units owed past the limit (lua/notify/crossings.lua's notify_report reads a report's);
-- EVAL answers the first value only.
local debt_units = math.max(0, math.floor(-level / window))
return {allowed, limit, remaining, math.ceil(reset_ms / 1000), retry_after, reset_after, reset_ms - now},
  debt_units
