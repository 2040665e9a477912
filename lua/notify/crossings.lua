-- Quota webhooks (docs/operations.md "Quota webhooks"), pasted into lua/batch.lua and
-- lua/multi.lua by the build (--@notify). Called after a check ran for real, with its reply:
-- finds the thresholds it crossed and claims each once per (key, threshold, window) with a
-- marker key (SET NX, expiring at the window's end), so that every sidecar sharing this Redis
-- sees the claim and only one sends the event. Appends to the reply, when any was claimed:
-- {..., window_end_ms, crossed_at_ms, position, position, ...} (position k: the k-th threshold
-- of `spec`; crossed_at_ms: the script's clock, the instant of the charge).
-- notify_report does the same for a report (POST /v1/report, a gRPC response-phase cost): the
-- thresholds its units crossed, then, when its debt passed the policy's bound, position 0 and
-- the debt in units: {..., window_end_ms, crossed_at_ms, position, ..., 0, debt}.
--
-- spec      "u1,u2,...": per threshold, the units used at which it fires (ceil(f * limit)), or
--           0 for the first denial in the window (f = 1.0); a report's: "u1,...;debt:<bound>"
-- used      limit - remaining after the check; before it: used - cost when it admitted
-- A threshold u > 0 is crossed by an admitted check with before < u <= used (or a denied one
-- that charged all the same: charges_when_denied); 0 by a denial.
-- The window, by the algorithm's row of policy::algorithm_table (.notify_window): its own
-- counter's (own_counter: it ends at the reply's reset; the count only rises in it, so a
-- crossing happens once, and the marker only guards against a refund); else (aligned: the
-- level falls back, refill or sliding) the aligned window of window_ms holding now, named in
-- the marker so that each window claims afresh.
-- The marker lives in the key's Redis Cluster slot: the key's hash tag when it has one, else the
-- whole key made a tag. A key with a '}' but no tag has no such name: no event for it.

-- The marker's prefix (the key's slot tag), the window's end (epoch ms), the marker's life (ms)
-- and the window's name in the marker; nothing for a key that has no slot tag.
--@own_counter_windows
local notify_window = function(key, algorithm, window, reply, now)
  local counter = own_counter_windows[algorithm] == true
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
  return tag, window_end, life, window_name
end

-- The algorithms whose script charges a denied check too (lua/erl_fixed_window.lua counts every
-- call as envoyproxy/ratelimit's pods do, and answers how far past the limit as a negative
-- remaining): their denials cross thresholds below 1.0 as admits do.
local charges_when_denied = {erl_fixed_window = true}

local notify_crossings = function(key, algorithm, window, cost, spec, reply, now)
  -- reply[1]: 0 denied, 1 admitted, 1 + d admitted after a delay of d ms (a reservation
  -- charges as an admit does)
  local admitted, limit, remaining = reply[1] >= 1, reply[2], reply[3]
  local charged = admitted or charges_when_denied[algorithm] == true
  local used = math.max(0, limit - remaining)
  local before = used
  if charged then before = used - cost end
  local tag, window_end, life, window_name = notify_window(key, algorithm, window, reply, now)
  if not tag then return end
  local fired = {}
  local position = 0
  for units in string.gmatch(spec, '%d+') do
    position = position + 1
    local u = tonumber(units)
    local crossed
    if u == 0 then crossed = not admitted else crossed = charged and before < u and used >= u end
    if crossed then
      local marker = tag .. ':notify:' .. units .. window_name
      if redis.call('SET', marker, '1', 'NX', 'PX', life) then
        fired[#fired + 1] = position
      end
    end
  end
  if #fired > 0 then
    reply[8] = window_end
    reply[9] = now
    for k = 1, #fired do reply[9 + k] = fired[k] end
  end
end

-- A report's claims appended to its reply: {..., window_end_ms, crossed_at_ms, position, ...,
-- 0, debt} (the positions of the thresholds it crossed, then position 0 and the debt when it
-- passed the bound).
local append_claims = function(reply, window_end, now, fired, debt)
  if #fired == 0 and not debt then return end
  reply[8] = window_end
  reply[9] = now
  for k = 1, #fired do reply[9 + k] = fired[k] end
  if debt then
    reply[10 + #fired] = 0
    reply[11 + #fired] = debt
  end
end

-- A report of `cost` units (> 0) charged without asking: the units it charged in all are
-- limit - remaining + debt (the algorithm's second return value), before it that less cost. It
-- crosses a threshold u > 0 with before < u <= charged, and the 1.0 threshold (spec 0, a check's
-- first denial) when it takes usage past the limit (before <= limit < charged: what a check would
-- have been denied); each under the check's marker, so that a window's threshold is claimed once
-- whichever way usage came to it. A refund (cost <= 0) crosses nothing.
-- It passed the debt bound when debt >= bound > debt - cost. The report charged `cost` units at
-- most, so the debt before it was at least debt - cost: when that is past the bound already,
-- this report did not take it there and sends nothing. The marker keeps it to one event per
-- window whatever came before.
-- spec: "<thresholds as notify_crossings reads them>;debt:<bound>" (either part may be empty).
-- One SET per threshold crossed and one for the bound at most: a report costs Redis that more.
local notify_report = function(key, algorithm, window, cost, spec, reply, debt, now)
  if cost <= 0 then return end
  local units_spec, debt_spec = string.match(spec, '^([%d,]*);(.*)$')
  if not units_spec then return end
  local tag, window_end, life, window_name = notify_window(key, algorithm, window, reply, now)
  if not tag then return end
  local limit = reply[2]
  -- remaining, or (erl_fixed_window) how far past the limit as a negative: then the debt is that
  local charged = math.max(0, limit - math.max(0, reply[3])) + (debt or 0)
  local before = charged - cost
  local fired = {}
  local position = 0
  for units in string.gmatch(units_spec, '%d+') do
    position = position + 1
    local u = tonumber(units)
    local crossed
    if u == 0 then crossed = before <= limit and charged > limit else crossed = before < u and charged >= u end
    if crossed and redis.call('SET', tag .. ':notify:' .. units .. window_name, '1', 'NX', 'PX', life) then
      fired[#fired + 1] = position
    end
  end
  local bound = tonumber(string.match(debt_spec, '^debt:(%d+)$') or '')
  local passed
  if bound and debt and debt >= bound and debt - cost < bound and
      redis.call('SET', tag .. ':notify:debt:' .. bound .. window_name, '1', 'NX', 'PX', life) then
    passed = debt
  end
  append_claims(reply, window_end, now, fired, passed)
end
