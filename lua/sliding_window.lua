-- sliding_window.lua: the sliding window counter. The count of the window that ends now is
-- estimated from two fixed windows: the previous window's count weighted by the part of it
-- still inside the sliding window, plus the current window's count. An approximation: it
-- assumes the previous window's units were spread evenly over it.
--
-- KEYS[1]  a hash {s = ms the current window opened, c = its count, p = the previous count,
--          w = the window_ms they were counted in}
-- ARGV[1]  limit      units per window
-- ARGV[2]  window_ms  window length in milliseconds
-- ARGV[3]  burst      unused (equals limit)
-- ARGV[4]  cost       units this check takes (1..limit)
-- ARGV[5]  unused
-- ARGV[6]  "peek" to report the state without changing it (cost is then 0);
--          "report:<max_debt>" to charge `cost` without asking (the estimate may pass the
--          limit, by max_debt at most: a debt that fades as the windows slide on); a negative
--          cost refunds the current window's count, down to 0 (the previous window's units are
--          past refunding). "report" alone: max_debt is the limit
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed(0|1), limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}, and second the units owed past the limit (the debt).
--
-- Windows follow each other from the key's first check (as fixed_window.lua's do): the
-- window opened at s is [s, s + window); at e ms into it the estimate is
-- p * (window - e) / window + c. Everything is compared multiplied by window_ms, in integers
-- (exact in a Lua double: limit * window_ms <= 2^53, which the config loader guarantees).
-- A check of `cost` is admitted when p * (window - e) + (c + cost) * window <= limit * window,
-- so remaining = limit - c - ceil(p * (window - e) / window) is exactly what fits now. Redis
-- TIME is the only clock. A denied check writes nothing. The TTL is the end of the window
-- after the current one (at most two windows): then both counts are out of the sliding window.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
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

-- The window `now` falls in, and the two counts as of now.
local start, cur, prev = now, 0, 0
-- A key another algorithm wrote (the policy changed algorithm on reload) counts as absent
-- and is replaced on the first admitted check.
local kind = redis.call('TYPE', KEYS[1]).ok
local foreign = kind ~= 'none'
if kind == 'hash' then
  local state = redis.call('HMGET', KEYS[1], 's', 'c', 'p', 'w')
  if state[1] and state[2] and state[3] then
    foreign = false
    local s = tonumber(state[1])
    if s > now then s = now end -- the clock stepped back (failover): stay in the stored window
    local was = tonumber(state[4]) or window -- written before 'w' was kept: this window
    local passed = math.floor((now - s) / was)
    if was ~= window then
      -- the window changed on reload: what still weighs in the old sliding window counts as
      -- admitted now, in a window of the new length that opens now
      if passed == 0 then
        cur = tonumber(state[2]) + tonumber(state[3])
      elseif passed == 1 then
        cur = tonumber(state[2])
      end
    elseif passed == 0 then
      start, cur, prev = s, tonumber(state[2]), tonumber(state[3])
    elseif passed == 1 then
      start, cur, prev = s + window, 0, tonumber(state[2])
    end -- two windows or more: both counts have left the sliding window; a new one opens now
  end
end

-- Units still weighing on the estimate at `e` ms into the current window, times window.
local elapsed = now - start
local weighted = prev * (window - elapsed) + cur * window
local remaining = math.max(0, math.floor((limit * window - weighted) / window))

-- Earliest ms at which `want` units fit, with no further check: later in the current window
-- (the previous count fades), else in the next one (the current count fades in its turn);
-- each time is the smallest integer e solving p * (window - e) <= room * window.
local function fits_at(want)
  local room = limit - cur - want
  if room >= 0 then
    if prev == 0 then return now end
    local e = window - math.floor(room * window / prev)
    if e < window then return start + math.max(elapsed, e) end
  end
  room = limit - want
  if cur == 0 then return start + window end
  return start + window + math.max(0, window - math.floor(room * window / cur))
end

local allowed, reset_ms
if report then
  allowed = 1
  -- the estimate stops at limit + max_debt (a count already past it is never raised); a refund
  -- at an empty current window
  local most = math.floor(((limit + max_debt) * window - prev * (window - elapsed)) / window)
  cur = math.max(0, math.min(cur + cost, math.max(cur, most)))
  if foreign then redis.call('DEL', KEYS[1]) end
  redis.call('HSET', KEYS[1], 's', string.format('%.0f', start), 'c', string.format('%.0f', cur), 'p', prev, 'w',
             string.format('%.0f', window))
  redis.call('PEXPIRE', KEYS[1], start + 2 * window - now)
  remaining = math.max(0, math.floor((limit * window - prev * (window - elapsed) - cur * window) / window))
  if remaining >= limit then reset_ms = now else reset_ms = fits_at(remaining + 1) end
elseif cost <= remaining then
  allowed = 1
  if not peek then
    cur = cur + cost
    if foreign then redis.call('DEL', KEYS[1]) end
    redis.call('HSET', KEYS[1], 's', string.format('%.0f', start), 'c', cur, 'p', prev, 'w',
               string.format('%.0f', window))
    redis.call('PEXPIRE', KEYS[1], start + 2 * window - now)
  end
  remaining = remaining - cost
  -- reset: when the next whole unit is back (now when nothing is used: only when peeking)
  if remaining >= limit then
    reset_ms = now
  else
    reset_ms = fits_at(remaining + 1)
  end
else
  allowed = 0
  -- reset: when `cost` units fit
  reset_ms = fits_at(cost)
end

local reset_after = math.ceil((reset_ms - now) / 1000)
local retry_after = 0
if allowed == 0 then retry_after = math.max(1, reset_after) end
-- Second, the units owed past the limit (lua/notify/crossings.lua's notify_report reads a report's);
-- EVAL answers the first value only.
local debt_units = math.max(0, math.floor((prev * (window - elapsed) + (cur - limit) * window) / window))
return {allowed, limit, remaining, math.ceil(reset_ms / 1000), retry_after, reset_after, reset_ms - now},
  debt_units
