#!/usr/bin/env bash
# The seed scenario exactly as a user would run it: limit 5, eight concurrent curls ->
# exactly five 200 and three 429, each 429 with a positive Retry-After.
# Usage: seed_scenario_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# A private redis-server on a free loopback port (retry if a random port is taken).
for _ in $(seq 1 20); do
  redis_port=$(shuf -i 20000-60000 -n 1)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 1 100); do
    redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break
    kill -0 "$redis_pid" 2>/dev/null || break
    sleep 0.05
  done
  if redis-cli -p "$redis_port" ping >/dev/null 2>&1; then pids+=("$redis_pid"); break; fi
done
redis-cli -p "$redis_port" ping >/dev/null

cat >"$work/config.yaml" <<'YAML'
policies:
  login:
    algorithm: fixed_window
    limit: 5
    window: 1m
YAML
"$bin" --config "$work/config.yaml" --listen 127.0.0.1:0 --redis "redis://127.0.0.1:$redis_port" >"$work/rl.log" 2>&1 &
pids+=("$!")
for _ in $(seq 1 200); do grep -q "listening on" "$work/rl.log" && break; sleep 0.05; done
port=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/rl.log" | sed 's/.*://')
[ -n "$port" ] || { echo "ratelimitd did not start:"; cat "$work/rl.log"; exit 1; }

seq 1 8 | xargs -P8 -I{} curl -s -o /dev/null -D "$work/h.{}" -w "%{http_code}\n" \
  -X POST "http://127.0.0.1:$port/v1/check" -H "Content-Type: application/json" \
  -d '{"policy":"login","tenant":"tenant_8231"}' >"$work/codes"

ok=$(grep -c '^200$' "$work/codes" || true)
denied=$(grep -c '^429$' "$work/codes" || true)
echo "200: $ok  429: $denied"
[ "$ok" -eq 5 ] || { echo "FAIL: expected exactly five 200"; exit 1; }
[ "$denied" -eq 3 ] || { echo "FAIL: expected exactly three 429"; exit 1; }

for h in "$work"/h.*; do
  if head -1 "$h" | grep -q ' 429'; then
    retry=$(grep -i '^Retry-After:' "$h" | tr -d '\r' | awk '{print $2}')
    [ -n "$retry" ] && [ "$retry" -ge 1 ] || { echo "FAIL: 429 without a positive Retry-After"; cat "$h"; exit 1; }
  fi
done
ttl=$(redis-cli -p "$redis_port" pttl rl:login:tenant_8231:global)
[ "$ttl" -gt 0 ] || { echo "FAIL: key without TTL ($ttl)"; exit 1; }
echo "PASS: 5 allowed, 3 denied with Retry-After, key TTL ${ttl} ms"
