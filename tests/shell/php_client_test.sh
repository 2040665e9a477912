#!/usr/bin/env bash
# The PHP client (clients/php) with real php-cli against a real ratelimitd + redis-server:
# verdicts, numbers and headers, 400s as exceptions, keep-alive reuse; then ratelimitd frozen
# and stopped (fail open / fail closed, each answer < 1 s); then Redis hung and stopped (the
# server's own fail-open / fail-closed verdicts reach the caller as verdicts, also with the
# client's default timeout).
# Usage: php_client_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/php/lib/servers.sh"
require_php
require_tools redis-server redis-cli curl

cat >"$work/config.yaml" <<'YAML'
policies:
  api:
    algorithm: fixed_window
    limit: 3
    window: 1m
  strict:
    algorithm: fixed_window
    limit: 2
    window: 1m
    on_store_error: deny
plans:
  pro:
    api: { limit: 10, window: 1m }
YAML

start_redis; redis_port=$started_port; redis_pid=$started_pid
# Verdicts with the harness's 2 s store deadline: on a loaded, sanitized build a Redis call may
# take longer than 50 ms, and a degraded verdict would put the exact counts off.
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"
url="http://127.0.0.1:$started_port"

echo "--- verdicts"
php "$root/tests/php/client_test.php" verdicts "$url"
# What the client was told is what Redis holds: three admitted, the denied fourth wrote nothing.
count=$(redis-cli -p "$redis_port" get rl:api:tenant_a:global)
[ "$count" = 3 ] || fail "rl:api:tenant_a:global is '$count', expected 3"
ttl=$(redis-cli -p "$redis_port" pttl rl:api:tenant_a:global)
[ "$ttl" -gt 0 ] || fail "rl:api:tenant_a:global has no TTL ($ttl)"
echo "ok    Redis holds 3 for tenant_a (TTL $ttl ms)"

# The server's default store deadline (50 ms), explicitly: the Redis-hung step proves the client's
# default timeout outlasts it.
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port" --store-timeout 50ms
url="http://127.0.0.1:$started_port"

echo "--- Redis hung: a default client waits for ratelimitd's on_store_error verdict"
kill -STOP "$redis_pid"
php "$root/tests/php/client_test.php" store-slow "$url"
kill -CONT "$redis_pid"

echo "--- Redis stopped: ratelimitd's on_store_error verdicts"
kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true
php "$root/tests/php/client_test.php" store-down "$url"

echo "--- ratelimitd frozen, then stopped: the client's own fail open / fail closed"
start_ratelimitd "$bin" "$work/config.yaml"   # embedded store: this part is about the sidecar only
php "$root/tests/php/client_test.php" outage "http://127.0.0.1:$started_port" "$started_pid"
echo "PASS: php client"
