#!/usr/bin/env bash
# Several limits on one PHP request are ONE layered check (Ratelimitd\Client\LimitChecker),
# against a real ratelimitd + redis-server: one limit is a plain check, two go to the layered
# route; every misconfiguration (no route, a default_policy answering instead, different
# scopes or costs, a policy twice, too many) is refused with a message naming the fix; and 12
# concurrent PHP processes on one tenant admit exactly the hourly limit (3), charging burst
# exactly 3 (a deny charges no layer).
# Usage: php_layered_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli

policies='policies:
  burst: { algorithm: fixed_window, limit: 5, window: 1m }
  hourly: { algorithm: fixed_window, limit: 3, window: 1h }
  unrouted: { algorithm: fixed_window, limit: 3, window: 1h }'
printf '%s\nroutes:\n  - { path: /_layered/burst+hourly, limits: [ { policy: burst }, { policy: hourly } ] }\n' "$policies" >"$work/layered.yaml"
printf 'default_policy: burst\n%s\n' "$policies" >"$work/fallback.yaml"

start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/layered.yaml" --redis "redis://127.0.0.1:$redis_port"; url="http://127.0.0.1:$started_port"
php "$root/tests/php/layered_test.php" rules "$url"
start_ratelimitd "$bin" "$work/fallback.yaml"
php "$root/tests/php/layered_test.php" fallback "http://127.0.0.1:$started_port"

echo "--- 12 concurrent PHP processes, one tenant"
pids=()
for i in $(seq 1 12); do
  php "$root/tests/php/layered_test.php" one "$url" tenant_race >"$work/race.$i" 2>&1 & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a racing process failed: $(cat "$work"/race.*)"; done
allowed=$(cat "$work"/race.* | grep -c '^allowed$' || true)
denied=$(cat "$work"/race.* | grep -c '^denied$' || true)
[ "$allowed" = 3 ] && [ "$denied" = 9 ] || fail "concurrent layered checks: $allowed allowed, $denied denied, expected 3 and 9"
[ "$(redis-cli -p "$redis_port" get rl:hourly:tenant_race:orders)" = 3 ] || fail "hourly counter is not 3"
[ "$(redis-cli -p "$redis_port" get rl:burst:tenant_race:orders)" = 3 ] \
  || fail "burst counter is $(redis-cli -p "$redis_port" get rl:burst:tenant_race:orders), expected 3 (denies must charge no layer)"
echo "ok    12 concurrent: exactly 3 allowed, 9 denied; burst and hourly both hold 3"
echo "PASS: layered limits from PHP"
