#!/usr/bin/env bash
# Concurrency leases through the PHP client (check() + release()) against a real ratelimitd
# and a real redis-server, then 32 concurrent acquirers through curl: exactly the limit holds.
# Usage: php_client_lease_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli curl

cat >"$work/config.yaml" <<'YAML'
policies:
  exports: { algorithm: concurrency, limit: 2, lease: 1m }
  quota:   { algorithm: fixed_window, limit: 3, window: 1m }
YAML

start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"
url="http://127.0.0.1:$started_port"

echo "--- check and release"
php "$root/tests/php/client_lease_test.php" "$url"

echo "--- 32 concurrent acquirers: exactly 2 hold a slot"
export url
seq 32 | xargs -P 32 -I{} curl -s -o /dev/null -w '%{http_code}\n' -H 'Content-Type: application/json' \
    -d '{"policy":"exports","tenant":"racers"}' "$url/v1/check" >"$work/race.txt"
held=$(grep -c '^200$' "$work/race.txt" || true)
[ "$held" = 2 ] || fail "$held of 32 acquirers hold a slot, expected exactly 2: $(sort "$work/race.txt" | uniq -c | tr '\n' ' ')"
members=$(redis-cli -p "$redis_port" zcard rl:exports:racers:global)
[ "$members" = 2 ] || fail "Redis holds $members leases, expected 2"
echo "ok    2 of 32 admitted, Redis holds 2 leases"
