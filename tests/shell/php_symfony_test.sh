#!/usr/bin/env bash
# The Symfony subscriber in the example app (clients/php/examples/symfony-app) served by
# `php -S`, against a real ratelimitd + redis-server: headers on allowed responses, 429 JSON
# + headers after the limit without running the controller, a route without a policy
# untouched, tenant = API-key owner or "ip:" + client IP, attribute on method and on class
# (the class one under the deprecated old name), two attributes as one layered check,
# the route map, and fail open / fail closed (503) within 1 s when ratelimitd is stopped.
# Usage: php_symfony_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
app="$root/clients/php/examples/symfony-app"
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli curl
for c in HttpKernel Routing; do
  [ -f "/usr/share/php/Symfony/Component/$c/autoload.php" ] \
    || fail "Symfony $c is not installed; run: bash scripts/install-deps.sh (php-symfony-http-kernel, php-symfony-routing)"
done

start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$app/ratelimitd.yaml" --redis "redis://127.0.0.1:$redis_port"
rl_pid=$started_pid
worklog="$work/controller-runs.log"; : >"$worklog"
# A timeout roomier than the 50 ms default: a stalled CI machine must not turn a verdict into
# fail-open here (the timeout itself is tested in php_client_test.sh).
start_php_server "$app/public/index.php" RATELIMITD_URL="http://127.0.0.1:$started_port" \
  RATELIMITD_TIMEOUT_MS=500 DEMO_WORK_LOG="$worklog"
base="http://127.0.0.1:$started_port"
: >"$worklog"   # the start-up probe's request is not part of the test

# req PATH [CURL ARGS...]: prints the status; headers in $work/h, body in $work/b, time in $work/t.
req() {
  local path=$1; shift
  curl -s -D "$work/h" -o "$work/b" -w '%{http_code} %{time_total}' "$@" "$base$path" >"$work/sw"
  awk '{print $2}' "$work/sw" >"$work/t"
  awk '{print $1}' "$work/sw"
}
header() { grep -i "^$1:" "$work/h" | head -1 | sed 's/^[^:]*: *//' | tr -d '\r'; }
has_limit_headers() { grep -qiE '^(x-ratelimit-[a-z]+|ratelimit|ratelimit-policy|retry-after):' "$work/h"; }
runs() { grep -c "^$1\$" "$worklog" || true; }
expect() { [ "$1" = "$2" ] || { echo "--- headers:"; cat "$work/h"; echo "--- body:"; cat "$work/b"; echo; fail "$3: expected '$2', got '$1'"; }; }
ok() { echo "ok    $*"; }

echo "--- a route without a policy is untouched"
for _ in 1 2 3 4 5; do
  expect "$(req /health)" 200 "/health status"
  ! has_limit_headers || fail "/health carries rate-limit headers: $(cat "$work/h")"
done
expect "$(redis-cli -p "$redis_port" dbsize)" 0 "Redis keys after /health (nothing may be counted)"
ok "/health: 5 x 200, no limit headers, no counter in Redis"

echo "--- attribute on the method: policy api (3/min), anonymous -> ip:127.0.0.1"
for remaining in 2 1 0; do
  expect "$(req /hello)" 200 "/hello status"
  expect "$(header X-RateLimit-Limit)" 3 "X-RateLimit-Limit"
  expect "$(header X-RateLimit-Remaining)" "$remaining" "X-RateLimit-Remaining"
  expect "$(header RateLimit-Policy)" '"api";q=3;w=60' "RateLimit-Policy"
  header RateLimit | grep -qE "^\"api\";r=$remaining;t=[0-9]+\$" || fail "RateLimit header: '$(header RateLimit)'"
  header X-RateLimit-Reset | grep -qE '^[0-9]{10}$' || fail "X-RateLimit-Reset is not epoch seconds: '$(header X-RateLimit-Reset)'"
  [ -z "$(header Retry-After)" ] || fail "Retry-After on an allowed response"
  grep -q '"hello":"anonymous"' "$work/b" || fail "controller answer missing: $(cat "$work/b")"
done
ok "/hello: 3 x 200 with X-RateLimit-*, RateLimit, RateLimit-Policy; remaining 2, 1, 0"

expect "$(req /hello)" 429 "/hello after the limit"
header Content-Type | grep -q '^application/json' || fail "429 is not JSON: $(header Content-Type)"
grep -q '"error":"rate_limited"' "$work/b" || fail "429 body: $(cat "$work/b")"
retry=$(header Retry-After)
[ -n "$retry" ] && [ "$retry" -ge 1 ] || fail "429 without a positive Retry-After"
grep -q "\"retry_after\":$retry[,}]" "$work/b" || fail "body retry_after differs from Retry-After $retry: $(cat "$work/b")"
expect "$(header X-RateLimit-Remaining)" 0 "429 X-RateLimit-Remaining"
expect "$(header X-RateLimit-Limit)" 3 "429 X-RateLimit-Limit"
header RateLimit | grep -qE "^\"api\";r=0;t=$retry\$" || fail "429 RateLimit t != Retry-After: '$(header RateLimit)'"
header Cache-Control | grep -q no-store || fail "429 without Cache-Control: no-store"
expect "$(runs hello)" 3 "controller runs of /hello (a denied request must not reach it)"
expect "$(redis-cli -p "$redis_port" get rl:api:ip:127.0.0.1:global)" 3 "counter of tenant ip:127.0.0.1"
ok "/hello #4: 429 JSON, Retry-After $retry, headers; controller ran 3 times; tenant ip:127.0.0.1"

echo "--- the authenticated tenant has its own budget"
expect "$(req /hello -H 'X-Api-Key: demo-key-alice')" 200 "/hello as alice"
expect "$(header X-RateLimit-Remaining)" 2 "alice's remaining"
grep -q '"hello":"tenant_alice"' "$work/b" || fail "alice's answer: $(cat "$work/b")"
expect "$(redis-cli -p "$redis_port" get rl:api:tenant_alice:global)" 1 "counter of tenant_alice"
[ -z "$(redis-cli -p "$redis_port" --scan --pattern '*demo-key*')" ] || fail "the API key itself reached a Redis key"
ok "alice (X-Api-Key) is limited as tenant_alice, apart from the exhausted IP; the key never reaches Redis"

echo "--- attribute on the class: scope reports, cost 2"
expect "$(req /reports)" 200 "/reports"
expect "$(header X-RateLimit-Remaining)" 1 "/reports remaining after cost 2"
expect "$(req /reports)" 429 "/reports with 1 unit left and cost 2"
expect "$(runs reports)" 1 "controller runs of /reports"
ok "/reports: own scope (the exhausted global scope does not apply), cost 2, then 429"

echo "--- two #[RatelimitdLimit] on one action: burst (5/min) + hourly (3/h), one layered check"
for remaining in 2 1 0; do
  expect "$(req /orders)" 200 "/orders status"
  expect "$(header RateLimit-Policy)" '"burst";q=5;w=60, "hourly";q=3;w=3600' "/orders RateLimit-Policy (both limits)"
  expect "$(header X-RateLimit-Remaining)" "$remaining" "/orders X-RateLimit-Remaining (the least remaining: hourly)"
done
expect "$(req /orders)" 429 "/orders #4 (hourly exhausted)"
expect "$(header X-RateLimit-Limit)" 3 "/orders 429 reports the limit that denied"
[ "$(header Retry-After)" -ge 1 ] || fail "/orders 429 without Retry-After"
expect "$(runs orders)" 3 "controller runs of /orders"
expect "$(redis-cli -p "$redis_port" get rl:hourly:ip:127.0.0.1:orders)" 3 "hourly counter"
expect "$(redis-cli -p "$redis_port" get rl:burst:ip:127.0.0.1:orders)" 3 "burst counter (the deny by hourly charged burst nothing)"
ok "/orders: both limits on every answer, 3 x 200 then 429 by hourly; burst holds 3, not 4: one atomic layered check"

echo "--- the route map: route login -> policy login (2/min)"
expect "$(req /login)" 200 "/login #1"; expect "$(header X-RateLimit-Limit)" 2 "/login limit"
expect "$(req /login)" 200 "/login #2"
expect "$(req /login)" 429 "/login #3"
[ "$(header Retry-After)" -ge 1 ] || fail "/login 429 without Retry-After"
ok "/login: limited by the route map, 2 x 200 then 429"

expect "$(req /no-such-page)" 404 "unknown path"
! has_limit_headers || fail "404 carries limit headers"
ok "unknown path: 404 without limit headers"

echo "--- ratelimitd stopped: fail open by default, fail closed (503) for login"
kill "$rl_pid"; wait "$rl_pid" 2>/dev/null || true
expect "$(req /hello -H 'X-Api-Key: demo-key-bob')" 200 "/hello while ratelimitd is down (fail open)"
! has_limit_headers || fail "fail-open answer carries limit headers"
t=$(cat "$work/t"); awk -v t="$t" 'BEGIN{exit !(t < 1.0)}' || fail "fail open took $t s"
ok "/hello: 200 without limit headers in $t s"
expect "$(req /login -H 'X-Api-Key: demo-key-bob')" 503 "/login while ratelimitd is down (fail closed)"
expect "$(header Retry-After)" 1 "503 Retry-After"
grep -q '"error":"rate_limiter_unavailable"' "$work/b" || fail "503 body: $(cat "$work/b")"
t=$(cat "$work/t"); awk -v t="$t" 'BEGIN{exit !(t < 1.0)}' || fail "fail closed took $t s"
ok "/login: 503 + Retry-After: 1 in $t s"
expect "$(req /health)" 200 "/health while ratelimitd is down"
echo "PASS: symfony subscriber"
