-- wrk script: POST /v1/check with tenants drawn from a distribution.
--   TENANTS=1        one hot tenant (mostly denials once its limit is spent)
--   TENANTS=10000    uniform over 10k tenants
-- POLICY names the policy (default "bench"). Reports through bench/report.lua.
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

dofile((os.getenv("BENCH_DIR") or "bench") .. "/report.lua")
