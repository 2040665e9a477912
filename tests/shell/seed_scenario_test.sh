#!/usr/bin/env bash
# The seed scenario exactly as a user would run it: limit 5, eight concurrent curls ->
# exactly five 200 and three 429, each 429 with a positive Retry-After.
# Usage: seed_scenario_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"   # work, ports from the shared lock protocol, checked cleanup
require_tools curl redis-server redis-cli
start_redis; redis_port=$started_port

cat >"$work/config.yaml" <<'YAML'
policies:
  login:
    algorithm: fixed_window
    limit: 5
    window: 1m
YAML
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"
port=$started_port

seq 1 8 | xargs -P8 -I{} curl -s -o /dev/null -D "$work/h.{}" -w "%{http_code}\n" \
  -X POST "http://127.0.0.1:$port/v1/check" -H "Content-Type: application/json" \
  -d '{"policy":"login","tenant":"tenant_8231"}' >"$work/codes"

ok=$(grep -c '^200$' "$work/codes" || true)
denied=$(grep -c '^429$' "$work/codes" || true)
echo "200: $ok  429: $denied"
[ "$ok" -eq 5 ] || fail "expected exactly five 200"
[ "$denied" -eq 3 ] || fail "expected exactly three 429"

for h in "$work"/h.*; do
  if head -1 "$h" | grep -q ' 429'; then
    retry=$(grep -i '^Retry-After:' "$h" | tr -d '\r' | awk '{print $2}')
    [ -n "$retry" ] && [ "$retry" -ge 1 ] || { cat "$h"; fail "429 without a positive Retry-After"; }
  fi
done
ttl=$(redis-cli -p "$redis_port" pttl rl:login:tenant_8231:global)
[ "$ttl" -gt 0 ] || fail "key without TTL ($ttl)"
echo "PASS: 5 allowed, 3 denied with Retry-After, key TTL ${ttl} ms"
