-- lua/token_bucket.lua as it was before the string layout (commit ea47211), unchanged below this
-- comment: the script every earlier sidecar runs. tests/integration/token_bucket_layout_test.cpp
-- runs it beside the new one to prove that a hash written under redis_state_layout: hash
-- is read by it exactly as its own, and that it reads a string bucket as a foreign key.
-- token_bucket.lua: a bucket of `burst` tokens refilled at `limit` tokens per `window`.
--
-- KEYS[1]  the bucket: a hash {l = level, t = ms of the last admitted check, w = window_ms
--          the level is counted in, b = the burst it was filled to}
-- ARGV[1]  limit      tokens added per window
-- ARGV[2]  window_ms  refill period in milliseconds
-- ARGV[3]  burst      capacity in tokens
-- ARGV[4]  cost       tokens this check takes (1..burst); a report: tokens charged, negative
--                     to refund
-- ARGV[5]  unused (the same argument list serves every algorithm)
-- ARGV[6]  "peek" to report the state without changing it (cost is then 0);
--          "report:<max_debt>" to charge `cost` without asking: the level may go below zero,
--          to -max_debt tokens at most (a debt, repaid by the refill; checks are denied until
--          `cost` tokens are back), a refund stops at a full bucket. "report" alone: max_debt
--          is the limit
--          "refund": give back one charge (lua/refund.lua; see below)
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed(0|1), limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}, and second the units owed past the limit (the debt).
--
-- The level is kept in units of 1/window_ms token, so refill is exactly `limit` units per
-- millisecond and every number is an integer (exact in a Lua double below 2^53, which the
-- config loader guarantees: burst * window_ms <= 2^53). Redis TIME is the only clock.
-- A denied check writes nothing. The TTL is the time until the bucket is full again: after
-- that the missing key means exactly the same thing (a full bucket); at most
-- (burst + max_debt) / limit windows (the config loader keeps (burst + max_debt) * window_ms
-- <= 2^53).
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local mode = ARGV[6] or ''
local peek = mode == 'peek'
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
-- The level at the last write plus the charge, never above the burst.
if mode == 'refund' then
  local key = KEYS[1]
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
  return
end

local capacity = burst * window
local need = cost * window
local level = capacity
-- A key another algorithm wrote (the policy changed algorithm on reload) counts as absent
-- and is replaced on the first admitted check.
local kind = redis.call('TYPE', KEYS[1]).ok
local foreign = kind ~= 'none'
if kind == 'hash' then
  local state = redis.call('HMGET', KEYS[1], 'l', 't', 'w', 'b')
  if state[1] and state[2] then
    foreign = false
    local stored = tonumber(state[1])
    -- a bucket written before 'w' and 'b' were kept: this policy's numbers
    local was_window = tonumber(state[3]) or window
    local was_burst = tonumber(state[4]) or burst
    if was_window ~= window or was_burst ~= burst then
      -- the numbers changed on reload: the tokens used stay used (in the new units, rounded
      -- up), out of the new burst
      local used = math.ceil((was_burst * was_window - stored) / was_window * window)
      stored = math.max(0, capacity - used)
    end
    local elapsed = now - tonumber(state[2])
    if elapsed < 0 then elapsed = 0 end -- the clock stepped back (failover): no refill
    level = math.min(capacity, stored + elapsed * limit)
  end
end

local allowed, reset_ms
if report then
  allowed = 1
  level = math.max(-max_debt * window, math.min(capacity, level - need))
  if foreign then redis.call('DEL', KEYS[1]) end
  if level >= capacity then
    redis.call('DEL', KEYS[1]) -- full again: the missing key means exactly that
  else
    redis.call('HSET', KEYS[1], 'l', string.format('%.0f', level), 't', string.format('%.0f', now), 'w',
               string.format('%.0f', window), 'b', string.format('%.0f', burst))
    redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - level) / limit))
  end
  -- reset: when the next whole token is usable (after the debt, if any)
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
    if foreign then redis.call('DEL', KEYS[1]) end
    redis.call('HSET', KEYS[1], 'l', string.format('%.0f', level), 't', string.format('%.0f', now), 'w',
               string.format('%.0f', window), 'b', string.format('%.0f', burst))
    redis.call('PEXPIRE', KEYS[1], math.ceil((capacity - level) / limit))
  end
  -- reset: when the next whole token is back
  local tokens = math.floor(level / window)
  if tokens >= burst then
    reset_ms = now -- full (only when peeking): nothing to wait for
  else
    reset_ms = now + math.ceil(((tokens + 1) * window - level) / limit)
  end
else
  allowed = 0
  -- reset: when `cost` tokens are back
  reset_ms = now + math.ceil((need - level) / limit)
end

local remaining = math.max(0, math.floor(level / window))
local reset_after = math.ceil((reset_ms - now) / 1000)
local retry_after = 0
if allowed == 0 then retry_after = math.max(1, reset_after) end
-- Second, the units owed past the limit (lua/multi.lua's notify_debt reads a report's);
-- EVAL answers the first value only.
local debt_units = math.max(0, math.floor(-level / window))
return {allowed, limit, remaining, math.ceil(reset_ms / 1000), retry_after, reset_after, reset_ms - now},
  debt_units
