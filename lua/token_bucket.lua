-- token_bucket.lua: a bucket of `burst` tokens refilled at `limit` tokens per `window`.
--
-- KEYS[1]  the bucket: a string "tb:<l>:<t>:<w>:<b>" (l = level, t = ms of the last admitted
--          check, w = window_ms the level is counted in, b = the burst it was filled to), or,
--          as earlier versions wrote it (and ARGV[5] "hash" still writes it), a hash {l, t, w, b}
-- ARGV[1]  limit      tokens added per window
-- ARGV[2]  window_ms  refill period in milliseconds
-- ARGV[3]  burst      capacity in tokens
-- ARGV[4]  cost       tokens this check takes (1..burst); a report: tokens charged, negative
--                     to refund
-- ARGV[5]  the layout written (redis_state_layout): "hash" for the hash of older versions,
--          anything else for the string. Both are read, whatever it says. Then, for a policy
--          with max_delay (or delay), ";delay:<queue>": a check may reserve down to <queue>
--          units below empty, admitted with the delay until the refill covers it
-- ARGV[6]  "peek" to report the state without changing it (cost is then 0);
--          "report:<max_debt>" to charge `cost` without asking: the level may go below zero,
--          to -max_debt tokens at most (a debt, repaid by the refill; checks are denied until
--          `cost` tokens are back), a refund stops at a full bucket. "report" alone: max_debt
--          is the limit
--          "refund": give back one charge (lua/refund.lua; see below)
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed, limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}, and second the units owed past the limit (the debt). allowed: 0
--          denied, 1 admitted, 1 + d admitted after d ms (a reservation, ARGV[5]'s queue)
--
-- The level is kept in units of 1/window_ms token, so refill is exactly `limit` units per
-- millisecond and every number is an integer (exact in a Lua double below 2^53, which the
-- config loader guarantees: burst * window_ms <= 2^53). Redis TIME is the only clock.
-- A denied check writes nothing. The TTL is the time until the bucket is full again: after
-- that the missing key means exactly the same thing (a full bucket); at most
-- (burst + max_debt) / limit windows (the config loader keeps (burst + max_debt) * window_ms
-- <= 2^53).
-- The string costs Redis one GET per check and one SET (with its PX) per admit; the hash
-- cost a TYPE, an HMGET, an HSET and a PEXPIRE. Its "tb:" tells it from GCRA's string of four
-- numbers, which a reload changing the algorithm may leave on the key.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local layout, queue = string.match(ARGV[5] or '', '^(%a*);delay:(%d+)$')
if not layout then layout, queue = ARGV[5], 0 end
local hash_layout = layout == 'hash'
queue = tonumber(queue)
local mode = ARGV[6] or ''
local peek = mode == 'peek'
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

-- The bucket on `key`: the type Redis holds it as ('none', 'string', 'hash', ...), then, when
-- it is a bucket of either layout, its level, last write, window and burst (those two nil in a
-- hash written before they were kept). Writing strings, one GET, and a TYPE only when the GET
-- meets another type (WRONGTYPE); writing the hash, a TYPE first, as earlier versions did.
local function load(key)
  local kind = 'string'
  if hash_layout then kind = redis.call('TYPE', key).ok end
  if kind == 'string' then
    local value = redis.pcall('GET', key)
    if not value then return 'none' end
    if type(value) == 'string' then
      local l, t, w, b = string.match(value, '^tb:(%-?%d+):(%d+):(%d+):(%d+)$')
      if l then return 'string', tonumber(l), tonumber(t), tonumber(w), tonumber(b) end
      return 'string'
    end
    kind = redis.call('TYPE', key).ok
  end
  if kind == 'hash' then
    local s = redis.call('HMGET', key, 'l', 't', 'w', 'b')
    if s[1] and s[2] then return kind, tonumber(s[1]), tonumber(s[2]), tonumber(s[3]), tonumber(s[4]) end
  end
  return kind
end

-- Writes the bucket (level, last write `at`) in the layout ARGV[5] names, to expire `ttl` ms
-- from now, when it is full again. `kind` is what load() found there: SET replaces any type;
-- a hash is written over only a hash of this bucket (`ours`), anything else goes first.
local function store(key, kind, ours, level, at, ttl)
  if not hash_layout then
    redis.call('SET', key, string.format('tb:%.0f:%.0f:%.0f:%.0f', level, at, window, burst), 'PX', ttl)
    return
  end
  if kind ~= 'none' and not (ours and kind == 'hash') then redis.call('DEL', key) end
  redis.call('HSET', key, 'l', string.format('%.0f', level), 't', string.format('%.0f', at), 'w',
             string.format('%.0f', window), 'b', string.format('%.0f', burst))
  redis.call('PEXPIRE', key, ttl)
end

-- "refund" (lua/refund.lua, a layered check on a Redis Cluster whose later slot group denied):
-- give back what one charge of `cost` took, then reply nothing. The level at the last write
-- plus the charge, never above the burst, written in the layout ARGV[5] names.
if mode == 'refund' then
  local key = KEYS[1]
  local kind, stored, at, was_window, was_burst = load(key)
  if not stored or (was_window or window) ~= window or (was_burst or burst) ~= burst then return end
  local level = math.min(burst * window, stored + cost * window)
  -- full again sooner: the TTL (time until full, from the last write) shrinks with it
  local ttl = at + math.ceil((burst * window - level) / limit) - now
  if ttl <= 0 then
    redis.call('DEL', key)
    return
  end
  store(key, kind, true, level, at, ttl)
  return
end

local capacity = burst * window
local need = cost * window
local level = capacity
-- A key another algorithm wrote (the policy changed algorithm on reload) counts as absent
-- and is replaced on the first admitted check.
local kind, stored, at, was_window, was_burst = load(KEYS[1])
local ours = stored ~= nil
if ours then
  -- a bucket written before 'w' and 'b' were kept: this policy's numbers
  was_window = was_window or window
  was_burst = was_burst or burst
  if was_window ~= window or was_burst ~= burst then
    -- the numbers changed on reload: the tokens used stay used (in the new units, rounded
    -- up), out of the new burst
    local used = math.ceil((was_burst * was_window - stored) / was_window * window)
    stored = math.max(0, capacity - used)
  end
  local elapsed = now - at
  if elapsed < 0 then elapsed = 0 end -- the clock stepped back (failover): no refill
  level = math.min(capacity, stored + elapsed * limit)
end

local allowed, reset_ms
if report then
  allowed = 1
  level = math.max(-max_debt * window, math.min(capacity, level - need))
  if level >= capacity then
    -- full again: the missing key means exactly that
    if kind ~= 'none' then redis.call('DEL', KEYS[1]) end
  else
    store(KEYS[1], kind, ours, level, now, math.ceil((capacity - level) / limit))
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
  if not peek then store(KEYS[1], kind, ours, level, now, math.ceil((capacity - level) / limit)) end
  -- reset: when the next whole token is back
  local tokens = math.floor(level / window)
  if tokens >= burst then
    reset_ms = now -- full (only when peeking): nothing to wait for
  else
    reset_ms = now + math.ceil(((tokens + 1) * window - level) / limit)
  end
elseif queue > 0 and need - level <= queue then
  -- reserved: due when the refill has covered it, charged now so later checks queue after it
  allowed = 1 + math.ceil((need - level) / limit)
  level = level - need
  store(KEYS[1], kind, ours, level, now, math.ceil((capacity - level) / limit))
  -- reset: when the next whole token is usable, after every reservation
  reset_ms = now + math.ceil((window - level) / limit)
else
  allowed = 0
  -- reset: when `cost` tokens (less the queue it may reserve) are back
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
