#!/usr/bin/env bash
# The Laravel integration in a real Laravel 8 app (Debian's php-laravel-framework; the package
# installed with Composer through a path repository, so Laravel's package auto-discovery finds
# RatelimitdServiceProvider from composer.json's extra.laravel), served by `php -S`, against a
# real ratelimitd + redis-server: the `ratelimitd:` middleware adds the limit headers, answers
# 429 + Retry-After without running the route, limits the authenticated user apart from the
# IP, decides two policies as one layered check, waits out a delayed admit (`wait=MS`) or
# refuses one longer than MS; ratelimitd stopped: fail open (a warning in
# Laravel's log) and 503 for a fail-closed route.
# Usage: php_laravel_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli curl composer
[ -f /usr/share/php/Illuminate/autoload.php ] \
  || fail "Laravel is not installed; run: bash scripts/install-deps.sh (php-laravel-framework)"
export COMPOSER_HOME="$work/composer-home" COMPOSER_NO_INTERACTION=1 COMPOSER_ALLOW_SUPERUSER=1

cp -r "$root/tests/php/laravel-app" "$work/app"
cp -r "$root/clients/php" "$work/package"
mkdir -p "$work/app/bootstrap/cache" "$work/app/storage/logs" "$work/app/storage/framework/views"
cat >"$work/app/composer.json" <<JSON
{
  "name": "test/laravel-app",
  "repositories": [{"type": "path", "url": "$work/package", "options": {"symlink": false}}, {"packagist.org": false}],
  "require": {"ratelimitd/client": "*@dev"},
  "autoload": {"psr-4": {"App\\\\": "app/"}}
}
JSON
composer install -d "$work/app" --no-progress >"$work/composer.log" 2>&1 || { cat "$work/composer.log"; fail "composer install failed"; }

cat >"$work/config.yaml" <<'YAML'
policies:
  api: { algorithm: fixed_window, limit: 3, window: 1m }
  burst: { algorithm: fixed_window, limit: 5, window: 1m }
  hourly: { algorithm: fixed_window, limit: 2, window: 1h }
  login: { algorithm: fixed_window, limit: 2, window: 1m }
  smooth: { algorithm: gcra, limit: 1, window: 2s, burst: 1, max_delay: 5s }
routes:
  - { path: /_layered/burst+hourly, limits: [ { policy: burst }, { policy: hourly } ] }
YAML
start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"; rl_pid=$started_pid
worklog="$work/runs.log"; applog="$work/laravel.log"
start_php_server "$work/app/public/index.php" RATELIMITD_URL="http://127.0.0.1:$started_port" RATELIMITD_TIMEOUT_MS=500 \
  WORK_LOG="$worklog" APP_LOG="$applog"
base="http://127.0.0.1:$started_port"
: >"$worklog"

grep -q 'Ratelimitd\\\\Client\\\\Laravel\\\\RatelimitdServiceProvider' "$work/app/bootstrap/cache/packages.php" \
  || fail "Laravel's package manifest does not list RatelimitdServiceProvider: $(cat "$work/app/bootstrap/cache/packages.php")"
! grep -q Ratelimitd "$work/app/config/app.php" || fail "config/app.php names the provider: auto-discovery would be untested"
echo "ok    RatelimitdServiceProvider auto-discovered (bootstrap/cache/packages.php), not listed in config/app.php"

req() { local path=$1; shift; curl -s -D "$work/h" -o "$work/b" -w '%{http_code}' "$@" "$base$path"; }
header() { grep -i "^$1:" "$work/h" | head -1 | sed 's/^[^:]*: *//' | tr -d '\r'; }
runs() { grep -c "^$1\$" "$worklog" || true; }
expect() { [ "$1" = "$2" ] || { cat "$work/h" "$work/b"; echo; tail -20 "$applog" 2>/dev/null; fail "$3: expected '$2', got '$1'"; }; }

for remaining in 2 1 0; do
  expect "$(req /hello)" 200 "/hello"
  expect "$(header X-RateLimit-Limit)" 3 "/hello X-RateLimit-Limit"
  expect "$(header X-RateLimit-Remaining)" "$remaining" "/hello X-RateLimit-Remaining"
  expect "$(header RateLimit-Policy)" '"api";q=3;w=60' "/hello RateLimit-Policy"
done
expect "$(req /hello)" 429 "/hello #4"
retry=$(header Retry-After)
[ -n "$retry" ] && [ "$retry" -ge 1 ] || fail "429 without a positive Retry-After"
grep -q '"error":"rate_limited"' "$work/b" || fail "429 body: $(cat "$work/b")"
expect "$(header X-RateLimit-Remaining)" 0 "429 X-RateLimit-Remaining"
expect "$(runs hello)" 3 "route runs of /hello"
expect "$(redis-cli -p "$redis_port" get rl:api:ip:127.0.0.1:global)" 3 "counter of ip:127.0.0.1"
echo "ok    /hello: 3 x 200 with headers, then 429 + Retry-After $retry; the route ran 3 times"

expect "$(req /hello -H 'X-Api-Key: key-alice')" 200 "/hello as alice"
expect "$(header X-RateLimit-Remaining)" 2 "alice's own budget"
expect "$(redis-cli -p "$redis_port" get rl:api:tenant_alice:global)" 1 "counter of tenant_alice"
echo "ok    the authenticated user (\$request->user()) is limited as tenant_alice"

expect "$(req /orders)" 200 "/orders #1"
expect "$(header RateLimit-Policy)" '"burst";q=5;w=60, "hourly";q=2;w=3600' "/orders lists both limits"
expect "$(req /orders)" 200 "/orders #2"
expect "$(req /orders)" 429 "/orders #3"
expect "$(redis-cli -p "$redis_port" get rl:burst:ip:127.0.0.1:orders)" 2 "burst counter (the deny charged nothing)"
echo "ok    ratelimitd:burst,hourly,scope=orders: one layered check"

expect "$(req /health)" 200 "/health"
! grep -qi '^x-ratelimit' "$work/h" || fail "/health carries limit headers"

# A max_delay policy, one unit per 2 s: the second request is booked about 2 s after the first.
# wait=5000: the route runs after the booked delay, never sooner (curl's own clock);
# wait=200: the same delay is refused, the route not run.
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
expect "$(grep -c '^smooth-short ' "$worklog")" 1 "route runs of /smooth-short"
echo "ok    ratelimitd:smooth,wait=5000 waited its booked $delay ms (answered after ${timed#* } s); wait=200 refused it"

kill "$rl_pid"; wait "$rl_pid" 2>/dev/null || true
expect "$(req /hello -H 'X-Api-Key: key-alice')" 200 "/hello with ratelimitd down (fail open)"
! grep -qi '^x-ratelimit' "$work/h" || fail "a fail-open answer carries limit headers"
grep -q 'WARNING: ratelimitd answer is degraded (unreachable)' "$applog" || fail "no degraded warning in Laravel's log: $(tail -5 "$applog" 2>/dev/null)"
expect "$(req /login -X POST)" 503 "/login with ratelimitd down (fail_open=0)"
expect "$(header Retry-After)" 1 "503 Retry-After"
expect "$(runs login)" 0 "route runs of /login"
echo "ok    ratelimitd stopped: fail open with a warning in Laravel's log; /login fails closed (503, Retry-After: 1)"
echo "PASS: laravel middleware + auto-discovered provider"
