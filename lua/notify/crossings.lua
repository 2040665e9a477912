-- Quota webhooks (docs/operations.md "Quota webhooks"), pasted into lua/batch.lua and
-- lua/multi.lua by the build (--@notify). Called after a check ran for real, with its reply:
-- finds the thresholds it crossed and claims each once per (key, threshold, window) with a
-- marker key (SET NX, expiring at the window's end), so that every sidecar sharing this Redis
-- sees the claim and only one sends the event. Appends to the reply, when any was claimed:
-- {..., window_end_ms, position, position, ...} (position k: the k-th threshold of `spec`).
--
-- spec      "u1,u2,...": per threshold, the units used at which it fires (ceil(f * limit)), or
--           0 for the first denial in the window (f = 1.0)
-- used      limit - remaining after the check; before it: used - cost when it admitted
-- A threshold u > 0 is crossed by an admitted check with before < u <= used; 0 by a denial.
-- The window: a fixed window's own counter (it ends at the reply's reset; the count only rises
-- in it, so a crossing happens once, and the marker only guards against a refund); for every
-- other algorithm, whose level falls back (refill, sliding), the aligned window of window_ms
-- holding now, named in the marker so that each window claims afresh.
-- The marker lives in the key's Redis Cluster slot: the key's hash tag when it has one, else the
-- whole key made a tag. A key with a '}' but no tag has no such name: no event for it.
local notify_crossings = function(key, algorithm, window, cost, spec, reply, now)
  local allowed, limit, remaining = reply[1], reply[2], reply[3]
  local used = math.max(0, limit - remaining)
  local before = used
  if allowed == 1 then before = used - cost end
  local counter = algorithm == 'fixed_window' or algorithm == 'erl_fixed_window'
  local window_end
  if counter then window_end = now + reply[7] else window_end = (math.floor(now / window) + 1) * window end
  local tag = key
  local open = string.find(key, '{', 1, true)
  local close = open and string.find(key, '}', open + 1, true)
  if not (close and close > open + 1) then
    if string.find(key, '}', 1, true) then return end
    tag = '{' .. key .. '}'
  end
  -- A fixed window's marker expires with its counter (the reset is the millisecond after the
  -- counter's expiry), so the check that opens the next window claims afresh.
  local life = math.max(1, window_end - now - 1)
  local window_name = ''
  if not counter then
    window_name = ':' .. string.format('%.0f', window_end)
    life = math.max(1, window_end - now)
  end
  local fired = {}
  local position = 0
  for units in string.gmatch(spec, '%d+') do
    position = position + 1
    local u = tonumber(units)
    local crossed
    if u == 0 then crossed = allowed == 0 else crossed = allowed == 1 and before < u and used >= u end
    if crossed then
      local marker = tag .. ':notify:' .. units .. window_name
      if redis.call('SET', marker, '1', 'NX', 'PX', life) then
        fired[#fired + 1] = position
      end
    end
  end
  if #fired > 0 then
    reply[8] = window_end
    for k = 1, #fired do reply[8 + k] = fired[k] end
  end
end
