-- wrk script: POST /v1/check with tenants drawn from a distribution.
--   TENANTS=1        one hot tenant (mostly denials once its limit is spent)
--   TENANTS=10000    uniform over 10k tenants
-- POLICY names the policy (default "bench"). Prints one JSON line of latency figures at the end.
local tenants = tonumber(os.getenv("TENANTS") or "10000")
local policy = os.getenv("POLICY") or "bench"
local headers = { ["Content-Type"] = "application/json" }

function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
end

function request()
  local t = tenants == 1 and 0 or math.random(0, tenants - 1)
  local body = '{"policy":"' .. policy .. '","tenant":"t' .. t .. '"}'
  return wrk.format("POST", "/v1/check", headers, body)
end

function done(summary, latency, requests)
  io.write(string.format(
    'RESULT {"requests":%d,"seconds":%.3f,"errors":%d,"non2xx":%d,"p50_ms":%.3f,"p99_ms":%.3f,"p999_ms":%.3f}\n',
    summary.requests, summary.duration / 1e6,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency:percentile(99.9) / 1000))
end
