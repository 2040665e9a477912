#!/usr/bin/env bash
# The PSR-15 middleware (Ratelimitd\Client\Psr15\RateLimitMiddleware) in a PSR-15 app served
# by `php -S` (tests/php/psr15/app.php: Debian's php-nyholm-psr7 messages, a minimal
# dispatcher; Debian 12 packages no PSR-15 dispatcher) against a real ratelimitd +
# redis-server: limit headers on allowed answers, 429 + Retry-After after the limit without
# running the handler, tenants by API key or IP, two limits as one layered check, a route
# without the middleware untouched; ratelimitd stopped: fail open, and 503 for a fail-closed limit.
# Usage: php_psr15_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli curl
[ -f /usr/share/php/Nyholm/Psr7/autoload.php ] || fail "nyholm/psr7 is not installed; run: bash scripts/install-deps.sh (php-nyholm-psr7)"

cat >"$work/config.yaml" <<'YAML'
policies:
  api: { algorithm: fixed_window, limit: 3, window: 1m }
  burst: { algorithm: fixed_window, limit: 5, window: 1m }
  hourly: { algorithm: fixed_window, limit: 2, window: 1h }
  login: { algorithm: fixed_window, limit: 2, window: 1m, on_store_error: deny }
routes:
  - { path: /_layered/burst+hourly, limits: [ { policy: burst }, { policy: hourly } ] }
YAML
start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"; rl_pid=$started_pid
worklog="$work/runs.log"
start_php_server "$root/tests/php/psr15/app.php" RATELIMITD_URL="http://127.0.0.1:$started_port" WORK_LOG="$worklog"
base="http://127.0.0.1:$started_port"
: >"$worklog"

req() {
  local path=$1; shift
  curl -s -D "$work/h" -o "$work/b" -w '%{http_code}' "$@" "$base$path"
}
header() { grep -i "^$1:" "$work/h" | head -1 | sed 's/^[^:]*: *//' | tr -d '\r'; }
runs() { grep -c "^$1\$" "$worklog" || true; }
expect() { [ "$1" = "$2" ] || { cat "$work/h" "$work/b"; echo; fail "$3: expected '$2', got '$1'"; }; }

for remaining in 2 1 0; do
  expect "$(req /hello)" 200 "/hello"
  expect "$(header X-RateLimit-Limit)" 3 "/hello X-RateLimit-Limit"
  expect "$(header X-RateLimit-Remaining)" "$remaining" "/hello X-RateLimit-Remaining"
  expect "$(header RateLimit-Policy)" '"api";q=3;w=60' "/hello RateLimit-Policy"
  [ -z "$(header Retry-After)" ] || fail "Retry-After on an allowed answer"
done
expect "$(req /hello)" 429 "/hello #4"
retry=$(header Retry-After)
[ -n "$retry" ] && [ "$retry" -ge 1 ] || fail "429 without a positive Retry-After"
grep -q '"error":"rate_limited"' "$work/b" || fail "429 body: $(cat "$work/b")"
grep -q "\"retry_after\":$retry}" "$work/b" || fail "body retry_after differs from Retry-After $retry"
header Cache-Control | grep -q no-store || fail "429 without Cache-Control: no-store"
expect "$(header X-RateLimit-Remaining)" 0 "429 X-RateLimit-Remaining"
expect "$(runs hello)" 3 "handler runs of /hello"
expect "$(redis-cli -p "$redis_port" get rl:api:ip:127.0.0.1:global)" 3 "counter of ip:127.0.0.1"
echo "ok    /hello: 3 x 200 with headers, then 429 + Retry-After $retry; the handler ran 3 times"

expect "$(req /hello -H 'X-Api-Key: key-alice')" 200 "/hello as alice"
expect "$(header X-RateLimit-Remaining)" 2 "alice's own budget"
echo "ok    the resolved tenant (tenant_alice) has a budget of its own"

expect "$(req /orders)" 200 "/orders #1"
expect "$(header RateLimit-Policy)" '"burst";q=5;w=60, "hourly";q=2;w=3600' "/orders lists both limits"
expect "$(req /orders)" 200 "/orders #2"
expect "$(req /orders)" 429 "/orders #3 (hourly spent)"
expect "$(runs orders)" 2 "handler runs of /orders"
expect "$(redis-cli -p "$redis_port" get rl:burst:ip:127.0.0.1:orders)" 2 "burst counter (the deny charged nothing)"
echo "ok    /orders: burst + hourly as one layered check; the deny charged burst nothing"

for _ in 1 2 3; do expect "$(req /health)" 200 "/health"; done
! grep -qi '^x-ratelimit' "$work/h" || fail "/health carries limit headers"
echo "ok    /health (no middleware): untouched"

kill "$rl_pid"; wait "$rl_pid" 2>/dev/null || true
expect "$(req /hello -H 'X-Api-Key: key-alice')" 200 "/hello with ratelimitd down (fail open)"
! grep -qi '^x-ratelimit' "$work/h" || fail "a fail-open answer carries limit headers"
expect "$(req /login)" 503 "/login with ratelimitd down (fail closed)"
expect "$(header Retry-After)" 1 "503 Retry-After"
grep -q '"error":"rate_limiter_unavailable"' "$work/b" || fail "503 body: $(cat "$work/b")"
expect "$(runs login)" 0 "handler runs of /login"
echo "ok    ratelimitd stopped: /hello fails open (200, no headers), /login fails closed (503, Retry-After: 1)"
echo "PASS: psr-15 middleware"
