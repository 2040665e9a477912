-- wrk script: GET requests carrying an API key, drawn uniformly from TENANTS keys (default
-- 10000). With ORIGINAL_URI set, the request also says which request it asks about, as a
-- proxy's auth subrequest does (X-Original-Method, X-Original-URI): for /v1/auth straight.
-- Reports through bench/report.lua.
local tenants = tonumber(os.getenv("TENANTS") or "10000")
local original_uri = os.getenv("ORIGINAL_URI")

function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
end

function request()
  local headers = { ["X-Api-Key"] = "sk_bench_" .. math.random(0, tenants - 1) }
  if original_uri then
    headers["X-Original-Method"] = "GET"
    headers["X-Original-URI"] = original_uri
  end
  return wrk.format("GET", nil, headers, nil)
end

dofile((os.getenv("BENCH_DIR") or "bench") .. "/report.lua")
