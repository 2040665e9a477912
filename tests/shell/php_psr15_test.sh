#!/usr/bin/env bash
# The PSR-15 middleware (Ratelimitd\Client\Psr15\RateLimitMiddleware) in a PSR-15 app served
# by `php -S` (tests/php/psr15/app.php: Debian's php-nyholm-psr7 messages, a minimal
# dispatcher; Debian 12 packages no PSR-15 dispatcher) against a real ratelimitd +
# redis-server: limit headers on allowed answers, 429 + Retry-After after the limit without
# running the handler, tenants by API key or IP, two limits as one layered check, a route
# without the middleware untouched; a delayed admit (max_delay) waited out before the handler
# runs, or refused when longer than the wait bound; ratelimitd stopped: fail open, and 503 for
# a fail-closed limit.
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
  smooth: { algorithm: gcra, limit: 1, window: 2s, burst: 1, max_delay: 5s }
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

# A max_delay policy, one unit per 2 s: the second request is booked about 2 s after the first.
# /smooth waits up to 5 s: the handler runs after the booked delay, never sooner (curl's own
# clock). /smooth-short waits up to 200 ms: the same delay is refused, the handler not run.
expect "$(req /smooth)" 200 "/smooth #1"
expect "$(grep -c '^smooth 0$' "$worklog")" 1 "/smooth #1 ran at once"
timed=$(req /smooth -w '%{http_code} %{time_total}')  # the last -w is curl's
expect "${timed%% *}" 200 "/smooth #2 (booked, waited)"
delay=$(sed -n 's/^smooth \([1-9][0-9]*\)$/\1/p' "$worklog")
[ -n "$delay" ] && [ "$delay" -le 2000 ] || fail "/smooth #2 ran without a booked delay of 1..2000 ms: $(cat "$worklog")"
awk -v t="${timed#* }" -v d="$delay" 'BEGIN { exit !(t * 1000 >= d) }' \
  || fail "/smooth #2 answered after ${timed#* } s, before its booked delay of $delay ms"
expect "$(req /smooth-short)" 200 "/smooth-short #1"
expect "$(req /smooth-short)" 429 "/smooth-short #2 (booked beyond the 200 ms it may wait)"
expect "$(header Retry-After)" 2 "/smooth-short #2 Retry-After (the delay in whole seconds)"
expect "$(grep -c '^smooth-short ' "$worklog")" 1 "handler runs of /smooth-short"
# The wait bound is the most a request may keep a PHP worker asleep: 0..3,600,000 ms, else refused.
php -r 'require $argv[1]; foreach ([-1, 3600001] as $ms) { try { new Ratelimitd\Client\DelayWait($ms); exit(1); }
  catch (InvalidArgumentException) {} } new Ratelimitd\Client\DelayWait(0); new Ratelimitd\Client\DelayWait(3600000);' \
  "$root/clients/php/autoload.php" || fail "DelayWait accepted a wait bound outside 0..3600000 ms"
echo "ok    max_delay: /smooth waited its booked $delay ms (answered after ${timed#* } s); /smooth-short refused a delay beyond 200 ms"

kill "$rl_pid"; wait "$rl_pid" 2>/dev/null || true
expect "$(req /hello -H 'X-Api-Key: key-alice')" 200 "/hello with ratelimitd down (fail open)"
! grep -qi '^x-ratelimit' "$work/h" || fail "a fail-open answer carries limit headers"
expect "$(req /login)" 503 "/login with ratelimitd down (fail closed)"
expect "$(header Retry-After)" 1 "503 Retry-After"
grep -q '"error":"rate_limiter_unavailable"' "$work/b" || fail "503 body: $(cat "$work/b")"
expect "$(runs login)" 0 "handler runs of /login"
echo "ok    ratelimitd stopped: /hello fails open (200, no headers), /login fails closed (503, Retry-After: 1)"
echo "PASS: psr-15 middleware"
