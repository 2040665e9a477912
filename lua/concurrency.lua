-- concurrency.lua: at most `limit` leases held at once; a lease not released expires after
-- `lease` ms, so a crashed holder cannot keep its slot.
--
-- KEYS[1]  sorted set: one member per held lease (its id), scored by its expiry in epoch ms
-- ARGV[1]  limit      leases held at once
-- ARGV[2]  lease_ms   how long a lease holds its slot unless released (Policy::window)
-- ARGV[3]  burst      unused (equals limit)
-- ARGV[4]  cost       1 (a lease is one slot; the planner refuses more)
-- ARGV[5]  lease id   the new lease's id (128 random bits, hex, made by the sidecar); on
--                     "release", the id to release
-- ARGV[6]  "peek" to report the state without changing it, "release" to free lease ARGV[5]
--          "refund": give back one charge (lua/refund.lua; see below)
-- ARGV[7]  optional: the time in ms, when the calling script read TIME for all its checks
-- Returns {allowed(0|1), limit, remaining, reset_epoch_s, retry_after_s, reset_after_s,
--          reset_after_ms}; on "release", allowed is 1 when a live lease was freed.
--
-- A lease is live while now < its expiry; expired leases are trimmed in the same script
-- before counting, so the count is exact whichever sidecar asks. remaining = limit - held.
-- The reset is when a slot is free: now when one is, else when enough of the oldest leases
-- expire (the (held - limit + 1)-th expiry; the first one unless the limit was lowered).
-- A denied check writes nothing but the trim. The TTL runs to the last lease's expiry.
local limit = tonumber(ARGV[1])
local lease_ms = tonumber(ARGV[2])
local cost = tonumber(ARGV[4])
local id = ARGV[5]
local mode = ARGV[6]
local peek = mode == 'peek'
if peek or mode == 'release' then cost = 0 end

local now = tonumber(ARGV[7])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- "refund" (lua/refund.lua, a layered check on a Redis Cluster whose later slot group denied):
-- give back what one charge of `cost` took, identified by ARGV[5], then reply nothing.
-- Exactly the lease the charge took.
if mode == 'refund' then
  local key, member = KEYS[1], ARGV[5]
  if redis.call('TYPE', key).ok == 'zset' then redis.call('ZREM', key, member) end
  return
end

-- A key another algorithm wrote (the policy changed algorithm on reload) holds no leases.
local kind = redis.call('TYPE', KEYS[1]).ok
local foreign = kind ~= 'none' and kind ~= 'zset'

local now_s = string.format('%.0f', now)
local held = 0
if not foreign then
  if peek then
    held = redis.call('ZCOUNT', KEYS[1], '(' .. now_s, '+inf')
  else
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_s)
    held = redis.call('ZCARD', KEYS[1])
  end
end

local allowed = 0
if mode == 'release' then
  if not foreign and redis.call('ZREM', KEYS[1], id) == 1 then
    allowed = 1
    held = held - 1
  end
elseif held + cost <= limit then
  allowed = 1
  if not peek then
    if foreign then redis.call('DEL', KEYS[1]) end
    redis.call('ZADD', KEYS[1], string.format('%.0f', now + lease_ms), id)
    held = held + 1
  end
end

if not peek and held > 0 then
  -- A TTL relative to `now`, not PEXPIREAT: Redis 7.0 deletes the key at once when the time
  -- given is behind its own clock, which moves on while the script runs (or `now` came from the
  -- calling script's TIME): live leases would be lost, and the reset below would find none.
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', KEYS[1], string.format('%.0f', tonumber(last[2]) - now))
end

local remaining = math.max(0, limit - held)
local reset_ms = now
if remaining == 0 and held > 0 then
  -- The live leases are the members above now (a peek trimmed nothing).
  local nth = held - limit
  local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now_s, '+inf', 'WITHSCORES', 'LIMIT', nth, 1)
  -- Never an error for want of a lease here: once, in the sanitized suite on a loaded machine,
  -- this range came back empty with `held` at the limit (cause not found; Redis 7.0 keeps a key
  -- given a TTL in a script for the rest of it), and a script error is a failed call. Without
  -- the lease's expiry the slot's reset is taken as now.
  reset_ms = tonumber(first[2]) or now
end
local reset_after = math.ceil((reset_ms - now) / 1000)
local retry_after = 0
if allowed == 0 and mode ~= 'release' then retry_after = math.max(1, reset_after) end
return {allowed, limit, remaining, math.ceil(reset_ms / 1000), retry_after, reset_after, reset_ms - now}
