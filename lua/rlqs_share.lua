-- rlqs_share.lua: one Envoy's share of an RLQS bucket's global budget for its next reporting
-- interval (docs/rlqs.md, "Shares across the fleet"). Called once per bucket of each report.
--
-- KEYS[1]  the bucket's hash (hash-tagged: one Redis Cluster slot), fields:
--            w        the window's start, epoch ms of Redis TIME
--            u        requests reported allowed in that window (the global usage)
--            e:<id>   one live Envoy: "<grant> <pending> <demand/s> <last seen ms>"
-- ARGV[1]  the Envoy's id (one per stream: a reconnect is a new Envoy)
-- ARGV[2]  num_requests_allowed of the report     ARGV[3]  num_requests_denied
-- ARGV[4]  time_elapsed in ms                     ARGV[5]  the rule's limit per window
-- ARGV[6]  window_ms                              ARGV[7]  assignment_ttl_ms
-- ARGV[8]  reporting_interval_ms                  ARGV[9]  most live Envoys kept
-- Returns {grant, used, live Envoys}: the Envoy may admit up to 2 × grant before its next
-- answer (its token bucket: max_tokens = grant, refilled by grant per TTL), and the ledger
-- holds 2 × grant for it until then, so used + everything held never passes the limit
-- except by 2 for each Envoy first seen when nothing was left (the newcomer's floor).
local id = ARGV[1]
local limit = tonumber(ARGV[5])
-- The counts are taken up to the limit and the time within [0, 1 day] (the caller does so
-- too): a hostile report changes nothing more than a report of the whole limit, and every
-- figure below stays an exact integer in Lua's doubles.
local function bounded(v, low, high) return math.min(math.max(tonumber(v) or 0, low), high) end
local allowed = bounded(ARGV[2], 0, limit)
local denied = bounded(ARGV[3], 0, limit)
local elapsed = bounded(ARGV[4], 0, 86400000)
local window = tonumber(ARGV[6])
local ttl = tonumber(ARGV[7])
local interval = tonumber(ARGV[8])
local max_live = tonumber(ARGV[9])

-- Windows on the store's clock: replicas with skewed clocks see the same window.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local wstart = now - (now % window)

local used, stored_w = 0, -1
local envoys, count, reclaimed = {}, 0, 0
local flat = redis.call('HGETALL', KEYS[1])
for i = 1, #flat, 2 do
  local f, v = flat[i], flat[i + 1]
  if f == 'w' then
    stored_w = tonumber(v)
  elseif f == 'u' then
    used = tonumber(v)
  else
    local g, p, d, s = string.match(v, '^(%S+) (%S+) (%S+) (%S+)$')
    local eid = string.sub(f, 3)
    if tonumber(s) + ttl < now and eid ~= id then
      -- Not heard from for a TTL: its assignment has expired and its share is reclaimed. What
      -- it held may have been admitted in a report that never arrived (its replica died): it
      -- is charged as used, so nothing it spent is handed out again.
      reclaimed = reclaimed + 2 * tonumber(g) + tonumber(p)
      redis.call('HDEL', KEYS[1], f)
    else
      envoys[eid] = {tonumber(g), tonumber(p), tonumber(d)}
      count = count + 1
    end
  end
end
if stored_w ~= wstart then used = 0 end
-- Saturates at the limit: a spent window is spent, and the reply stays a small integer.
used = math.min(used + allowed + reclaimed, limit)

local me = envoys[id]
local held, weight = 0, 0
for eid, e in pairs(envoys) do
  if eid ~= id then
    held = held + 2 * e[1] + e[2]
    weight = weight + e[3] * interval / 1000 + 1
  end
end
local left = limit - used

if not me and count >= max_live then
  -- Past the live set: the floor only, when the pool has it, charged at once (nothing is kept
  -- for this id, so nothing could be reclaimed).
  local grant = 0
  if left - held >= 2 then grant = 1 end
  used = used + 2 * grant
  redis.call('HSET', KEYS[1], 'w', wstart, 'u', used)
  redis.call('PEXPIRE', KEYS[1], wstart + window - now + ttl)
  return {grant, used, count}
end

local rate = (allowed + denied) * 1000 / math.max(elapsed, interval / 4)
local pending = 0
if me then
  rate = (me[3] + rate) / 2
  -- What the last assignment may still admit while this answer travels: at most its 2 x grant.
  pending = math.min(math.max(2 * me[1] + me[2] - allowed, 0), 2 * me[1])
else
  count = count + 1
end
held = held + pending
local mine = rate * interval / 1000 + 1
weight = weight + mine

local grant = 0
if left > 0 then
  local pool = math.max(left - held, 0)
  -- The fleet's budget for one interval at an even pace to the window's end, split by demand.
  local remaining = math.max(wstart + window - now, interval)
  local pace = math.ceil(left * interval / remaining)
  local share = math.floor(pace * mine / weight)
  local floor = math.max(1, math.floor(pace / (4 * count)))
  grant = math.min(math.floor(pool / 2), math.max(floor, share))
  if grant == 0 and not me then grant = 1 end  -- a newcomer is never starved
end

redis.call('HSET', KEYS[1], 'w', wstart, 'u', used,
           'e:' .. id, grant .. ' ' .. pending .. ' ' .. string.format('%.3f', rate) .. ' ' .. now)
redis.call('PEXPIRE', KEYS[1], wstart + window - now + ttl)
return {grant, used, count}
