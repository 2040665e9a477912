-- fixed_window.lua: at most `limit` units per window; the window opens at its first check, or,
-- with `align: calendar`, is the calendar period (minute .. year) holding now.
--
-- KEYS[1]  the counter: units admitted in the current window; with a calendar, the prefix of
--          the counters (policy::make_calendar_key): the period's start in epoch seconds is
--          appended here, so every period counts in a key of its own and nothing carries over
--          (the key keeps KEYS[1]'s hash tag, so it stays in KEYS[1]'s Redis Cluster slot)
-- ARGV[1]  limit      units per window
-- ARGV[2]  window_ms  window length in milliseconds (unused with a calendar)
-- ARGV[3]  burst      unused (equals limit)
-- ARGV[4]  cost       units this check takes (1..limit); a report: units charged, negative
--                     to refund
-- ARGV[5]  "cal:<unit>:<offset minutes>" for a calendar ("cal:1mo:120"), else unused
-- ARGV[6]  "peek" to report the state without changing it (cost is then 0);
--          "report:<max_debt>" to charge `cost` without asking (the count may pass the limit,
--          by max_debt at most: the debt is repaid when the window ends; a refund never goes
--          below an empty window). "report" alone: max_debt is the limit
--          "refund": give back one charge (lua/refund.lua; see below)
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed(0|1), limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}, and second the units owed past the limit (the debt).
--
-- The key's TTL is the end of the window (its last millisecond). INCRBY keeps an existing TTL, so only a new
-- counter gets PEXPIRE; a denied check neither increments nor extends the window. After a
-- reload the count carries over: a lower limit applies to it at once, a shorter window caps
-- the TTL to the new window (even on a denied check), a longer one starts with the next
-- window. A calendar counter expires at its period's end.
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

-- "refund" (lua/refund.lua, a layered check on a Redis Cluster whose later slot group denied):
-- give back what one charge of `cost` took, identified by ARGV[5], then reply nothing.
-- The counter of the same window: its TTL only shrinks, and a new window (opened after the
-- charge's ended) has more TTL left than the charge saw, unless a whole window passed (the
-- sidecar refunds within one window).
if mode == 'refund' then
  local key, member = KEYS[1], ARGV[5]
  if redis.call('TYPE', key).ok ~= 'string' then return end
  local count = tonumber(string.match(redis.call('GET', key), '^%d+$') or '')
  local ttl = redis.call('PTTL', key)
  if count and count >= cost and ttl >= 0 and ttl <= tonumber(member) then redis.call('DECRBY', key, cost) end
  return
end

-- Gregorian day arithmetic (core/calendar.cpp does the same in C++; Redis Lua has no os.date):
-- 400-year eras of 146097 days starting on March 1st, so the leap day ends its year.
local function days_from_civil(y, m) -- the first of month m
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local mp = m > 2 and m - 3 or m + 9
  local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + math.floor((153 * mp + 2) / 5)
  return era * 146097 + doe - 719468
end
local function civil_from_days(days) -- year and month
  days = days + 719468
  local era = math.floor(days / 146097)
  local doe = days - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp < 10 and mp + 3 or mp - 9
  if m <= 2 then return yoe + era * 400 + 1, m end
  return yoe + era * 400, m
end
-- [start, end) in epoch ms of the period of `unit` holding `at`, on a clock offset_ms east of UTC
local function calendar_period(unit, offset_ms, at)
  local day = 86400000
  local fixed = {['1m'] = 60000, ['1h'] = 3600000, ['1d'] = day}
  local t = at + offset_ms
  local s, e
  if fixed[unit] then
    s = math.floor(t / fixed[unit]) * fixed[unit]
    e = s + fixed[unit]
  elseif unit == '1w' then
    local d = math.floor(t / day)
    s = (d - (d + 3) % 7) * day -- 1970-01-01 was a Thursday; ISO weeks start on Monday
    e = s + 7 * day
  else
    local y, m = civil_from_days(math.floor(t / day))
    local ny, nm = y, m + 1
    if unit == '1y' then m, ny, nm = 1, y + 1, 1 elseif m == 12 then ny, nm = y + 1, 1 end
    s = days_from_civil(y, m) * day
    e = days_from_civil(ny, nm) * day
  end
  return s - offset_ms, e - offset_ms
end

local key = KEYS[1]
local period_end = nil
local unit, offset = string.match(ARGV[5] or '', '^cal:(%w+):(%-?%d+)$')
if unit then
  local start
  start, period_end = calendar_period(unit, tonumber(offset) * 60000, now)
  key = key .. string.format('%.0f', start / 1000)
  window = period_end - now -- what is left of the period: a new counter's TTL
end

-- A key another algorithm wrote (the policy changed algorithm on reload) is no counter:
-- the window starts afresh, replacing it.
local kind = redis.call('TYPE', key).ok
local current = nil
if kind == 'string' then current = string.match(redis.call('GET', key), '^%d+$') end
local foreign = kind ~= 'none' and not current
local count = 0
if current then count = tonumber(current) end

local allowed = 0
if report then
  allowed = 1
  -- a refund stops at an empty window; a charge at limit + max_debt (or at a count already past
  -- it, which a report never raises)
  local charged = math.min(math.max(count, limit + max_debt), math.max(0, count + cost))
  if foreign then redis.call('DEL', key) end
  if current and not foreign then
    redis.call('SET', key, string.format('%.0f', charged), 'KEEPTTL')
  elseif charged > 0 then
    redis.call('SET', key, string.format('%.0f', charged))
  end
  count = charged
elseif count + cost <= limit then
  allowed = 1
  if not peek then
    if foreign then redis.call('DEL', key) end
    count = redis.call('INCRBY', key, cost)
  end
end

-- A key lives through the millisecond of its expiry (Redis drops it when now > its expiry
-- time): a counter expires window - 1 ms after the check that opened it, so the next window
-- opens exactly `window` ms after that check, the millisecond after the expiry (a 1 ms window:
-- 2 ms, as PEXPIRE 0 would delete the counter). A calendar counter is left at its period's end.
local life = window
if not period_end then life = math.max(1, window - 1) end
local ttl = 0
if count > 0 then
  ttl = redis.call('PTTL', key)
  if ttl < 0 and not peek then -- a new window (or a counter that lost its TTL: never leave one without)
    redis.call('PEXPIRE', key, life)
    ttl = life
  elseif ttl > life then -- the window was shortened on reload: it ends within the new one
    if not peek then redis.call('PEXPIRE', key, life) end
    ttl = life
  end
end

if ttl < 0 then ttl = 0 end
-- The reset: the millisecond after the counter's expiry, when the new window opens, so a
-- caller that waits Retry-After meets it.
local reset_ms = now
if count > 0 then reset_ms = now + ttl + 1 end
if period_end then reset_ms = period_end end -- the boundary, whatever the count
local reset_after = math.ceil((reset_ms - now) / 1000)
local retry_after = 0
if allowed == 0 then retry_after = math.max(1, reset_after) end
-- Second, the units owed past the limit (lua/notify/crossings.lua's notify_report reads a report's);
-- EVAL answers the first value only.
local debt_units = math.max(0, count - limit)
return {allowed, limit, math.max(0, limit - count), math.ceil(reset_ms / 1000), retry_after, reset_after,
        reset_ms - now}, debt_units
