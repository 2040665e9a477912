-- sliding_log.lua: at most `limit` units in any window of `window_ms`: a log of when each
-- unit was admitted, one weighted entry per admitted check or report.
--
-- KEYS[1]  the log: a sorted set of entries "#<before>:<units>:<id>" scored by the ms they were
--          admitted at, where <before> (16 digits, zero-padded) is the running total of units
--          logged before the entry, so the units of any run of entries is a difference of two
--          totals, and rank order (score, then name) is the order of the totals. <id> is the
--          check's member, or "debt" for a report's entry that went past the limit.
-- ARGV[1]  limit      units per window
-- ARGV[2]  window_ms  window length in milliseconds
-- ARGV[3]  burst      unused (equals limit)
-- ARGV[4]  cost       units this check takes (1..limit); a report: units charged
-- ARGV[5]  member     unique per check across every sidecar (instance id + counter)
-- ARGV[6]  "peek" to report the state without changing it (cost is then 0); "report:<max_debt>"
--          to charge `cost` units without asking: the log may pass the limit, by max_debt
--          units at most (the policy's max_debt; "report" alone: the limit), a debt repaid as
--          the entries leave the window. A report that goes past the limit is a "debt" entry;
--          another one while the newest entry is a debt entry joins it, moved to now (one
--          debt entry, never one per report). No refunds: the planner refuses a negative
--          report on a sliding log (a negative cost here logs nothing)
--          "refund": give back one charge (lua/refund.lua; see below)
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed(0|1), limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}, and second the units owed past the limit (the debt).
--
-- An entry scored s is inside the window while s > now - window_ms. A denied check only
-- reads. The TTL is the window: the newest entry leaves the window when the key expires.
-- Bounded work, whatever the cost: an entry is added only while the window holds less than
-- the limit (or joins the debt entry), so the window never holds more than limit + 1 entries;
-- a write removes at most 64 entries that left it, so the key never holds more than
-- 2 * (limit + 1). A call reads entries by rank, a binary search for the reset: about
-- 2 + log2(limit + 1) ZRANGEs of one entry, never a walk over the log.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local cost = tonumber(ARGV[4])
local member = ARGV[5]
local mode = ARGV[6] or ''
local peek = mode == 'peek'
local report = string.sub(mode, 1, 6) == 'report'
local max_debt = tonumber(string.match(mode, '^report:(%d+)$') or '') or limit
if peek or cost < 0 then cost = 0 end

-- Redis TIME, or the instant multi.lua / batch.lua read once for every check of their call
local now = tonumber(ARGV[7])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- "refund" (lua/refund.lua, a layered check on a Redis Cluster whose later slot group denied):
-- give back what one charge of `cost` took, identified by ARGV[5], then reply nothing.
-- Exactly the entry the charge added ("#<before>:<cost>:<member>", lua/sliding_log.lua), when it
-- is among the newest 16 (a refund follows its charge within one request): the entries after
-- it take its units out of their running totals. Else nothing is given back.
if mode == 'refund' then
  local key, member = KEYS[1], ARGV[5]
  if redis.call('TYPE', key).ok ~= 'zset' then return end
  local newest = redis.call('ZRANGE', key, -16, -1, 'WITHSCORES')
  local at = nil
  for i = 1, #newest, 2 do
    local units, id = string.match(newest[i], '^#%d+:(%d+):(.*)$')
    if id == member and tonumber(units) == cost then at = i end
  end
  if not at then return end
  redis.call('ZREM', key, newest[at])
  for i = at + 2, #newest, 2 do
    local before, rest = string.match(newest[i], '^#(%d+):(.*)$')
    if before then
      redis.call('ZREM', key, newest[i])
      redis.call('ZADD', key, newest[i + 1], '#' .. string.format('%016.0f', tonumber(before) - cost) .. ':' .. rest)
    end
  end
  return
end
local edge = string.format('%.0f', now - window) -- the newest score outside the window

-- The entry at `rank`: score, units logged before it, its units, its name (nil when none).
local function entry(rank)
  local e = redis.call('ZRANGE', KEYS[1], rank, rank, 'WITHSCORES')
  if not e[1] then return nil end
  local before, units = string.match(e[1], '^#(%d+):(%d+):')
  return tonumber(e[2]), tonumber(before), tonumber(units), e[1]
end
local function name(before, units, id)
  return '#' .. string.format('%016.0f', before) .. ':' .. string.format('%.0f', units) .. ':' .. id
end

-- A key another algorithm wrote (the policy changed algorithm on reload) counts as an empty
-- log and is replaced on the first admitted check. A changed window needs nothing: the log
-- holds when each unit was admitted.
local kind = redis.call('TYPE', KEYS[1]).ok
local foreign = kind ~= 'none' and kind ~= 'zset'
if kind == 'zset' then
  local newest_s, newest_before = entry(-1)
  local _, first_before = entry(redis.call('ZCOUNT', KEYS[1], '-inf', edge))
  if newest_s and not (newest_before and (first_before or newest_s <= now - window)) then
    -- Members of one unit each (written before entries were weighted, or by a sidecar of that
    -- version during a rolling upgrade): the units in the window become one entry at the
    -- newest score, which never leaves earlier than they would. Only one member per unit:
    -- counted; mixed with entries: the window is read once to add them up.
    local units = 0
    if not newest_before and not first_before then
      units = redis.call('ZCOUNT', KEYS[1], '(' .. edge, '+inf')
    else
      local items = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. edge, '+inf')
      for i = 1, #items do units = units + (tonumber(string.match(items[i], '^#%d+:(%d+):') or '') or 1) end
    end
    redis.call('UNLINK', KEYS[1])
    if units > 0 then
      redis.call('ZADD', KEYS[1], string.format('%.0f', newest_s), name(0, units, 'legacy'))
      redis.call('PEXPIRE', KEYS[1], math.max(1, newest_s + window - now))
    end
  end
end

-- The window's entries are the ranks first..last; `total` the running total after the newest.
local first, last, base, total, newest_ms, newest_name = 0, -1, 0, 0, nil, nil
local function read_log()
  first = redis.call('ZCOUNT', KEYS[1], '-inf', edge)
  last = redis.call('ZCARD', KEYS[1]) - 1
  base, total, newest_ms, newest_name = 0, 0, nil, nil
  if last >= 0 then
    local s, before, units, n = entry(last)
    total, newest_ms, newest_name = before + units, s, n
    base = total
    if first <= last then
      local _, b = entry(first)
      base = b
    end
  end
end
if not foreign then read_log() end
local count = total - base

local allowed, need
if peek then
  allowed = 1
  need = 1 -- reset: when the oldest entry leaves the window
elseif report or count + cost <= limit then
  allowed = 1
  if foreign then
    redis.call('DEL', KEYS[1])
    foreign = false
    read_log()
  end
  local units = cost
  if report then
    -- what fits under the limit, then debt up to max_debt (never less than is owed already)
    units = math.min(cost, math.max(0, limit + max_debt - count))
  end
  if units > 0 then
    -- score order is running-total order: a clock that stepped back logs at the newest score
    local at = now
    if newest_ms and newest_ms > at then at = newest_ms end
    local id = member
    if report and count + units > limit then
      id = 'debt'
      if newest_name and first <= last and string.sub(newest_name, -5) == ':debt' then
        -- one debt entry: the newest joins this report, moved to now
        local _, before, owed = entry(last)
        redis.call('ZREM', KEYS[1], newest_name)
        total = before
        units = units + owed
      end
    end
    redis.call('ZADD', KEYS[1], string.format('%.0f', at), name(total, units, id))
    total = total + units
  end
  -- At most 64 entries that left the window, so no call pays for a long idle log at once.
  if first > 0 then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, math.min(first, 64) - 1) end
  first = first - math.min(first, 64)
  redis.call('PEXPIRE', KEYS[1], window)
  count = total - base
  need = 1 -- reset: when the oldest entry leaves the window
  -- in debt (a report): when enough entries have left for one unit to fit
  if count >= limit then need = count - limit + 1 end
else
  allowed = 0
  need = count + cost - limit -- reset: when enough entries have left for `cost` to fit
end

-- The reset: when the need-th unit of the window leaves it, with its entry: the first entry
-- whose running total reaches base + need, found by rank in a binary search.
local reset_ms = now -- an empty window (only when peeking) resets now
if count > 0 and not foreign then
  last = redis.call('ZCARD', KEYS[1]) - 1
  local lo, hi = first, last
  local found = nil
  -- most often the oldest entry of the window is the one (need = 1): no search
  local s0, before0, units0 = entry(first)
  if s0 and before0 + units0 >= base + need then
    found = s0
    hi = lo - 1
  end
  while lo <= hi do
    local mid = math.floor((lo + hi) / 2)
    local s, before, units = entry(mid)
    if before + units >= base + need then
      found = s
      hi = mid - 1
    else
      lo = mid + 1
    end
  end
  -- only a cost above the limit (a broken precondition) finds none
  if found then reset_ms = found + window else reset_ms = now + window end
end
local reset_after = math.ceil((reset_ms - now) / 1000)
local retry_after = 0
if allowed == 0 then retry_after = math.max(1, reset_after) end
-- Second, the units owed past the limit (lua/notify/crossings.lua's notify_report reads a report's);
-- EVAL answers the first value only.
local debt_units = math.max(0, count - limit)
return {allowed, limit, math.max(0, limit - count), math.ceil(reset_ms / 1000), retry_after, reset_after,
        reset_ms - now}, debt_units
