#!/usr/bin/env bash
# scripts/ratelimit-probe --public-url: probing through the proxy, as the API's clients see it.
# nginx runs the shipped config/nginx/ratelimitd.conf (auth_request to ratelimitd's /v1/auth,
# identity X-Api-Key, hashed) in front of a `php -S` API, against a real ratelimitd + Redis:
# the probe passes (readyz asked of --url, TTL step without the hashed key name); with
# ratelimitd stopped, nginx failing open lets everything through and the probe says nothing
# asked ratelimitd; nginx failing closed answers 500, and the probe names it.
# Usage: probe_proxy_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
probe="$root/scripts/ratelimit-probe"
. "$root/tests/php/lib/servers.sh"
require_tools curl redis-server redis-cli sh envsubst
require_php
PATH="$PATH:/usr/sbin"; require_tools nginx

cat >"$work/config.yaml" <<'YAML'
policies:
  probe: { algorithm: sliding_log, limit: 5, window: 3s }
routes:
  - { path: "/*", policy: probe }
identity:
  - { name: api_key, header: X-Api-Key, hash: true }
  - { client_ip: true }
hash_secret: "probe-proxy-test-secret-0123456789"
trusted_proxies: [127.0.0.1/32]
YAML
start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"; rl=$started_port; rl_pid=$started_pid
start_php_server "$root/tests/php/probe_upstream.php"; api=$started_port
start_nginx_auth "$rl" "$api" closed; closed=$started_port
start_nginx_auth "$rl" "$api" open; open=$started_port

echo "--- through the proxy, a correct deployment"
sh "$probe" --public-url "http://127.0.0.1:$closed/v1/orders" --identity-header X-Api-Key --limit 5 \
  --url "http://127.0.0.1:$rl" --redis "redis://127.0.0.1:$redis_port" | tee "$work/out" \
  || fail "the probe failed through a correct proxy"
for step in readyz: 'quota: 5 of 7' denied: isolation: ttl: recovery: PASS; do
  grep -q "$step" "$work/out" || fail "the probe's output lacks '$step'"
done
[ -z "$(redis-cli -p "$redis_port" --scan --pattern '*probe-*')" ] || fail "a raw API key reached Redis"
echo "ok    the probe passes through nginx; the API keys reached Redis only hashed"

# must_fail NAME EXPECTED PROBE_ARGS...
must_fail() {
  local name=$1 expected=$2 rc
  shift 2
  set +e; sh "$probe" --max-wait 5 "$@" >"$work/out" 2>&1; rc=$?; set -e
  if [ "$rc" != 1 ] || ! grep -q -- "FAIL: $expected" "$work/out"; then
    cat "$work/out"; fail "$name: expected exit 1 with 'FAIL: $expected', got exit $rc"
  fi
  echo "ok    $name: $(grep FAIL: "$work/out")"
}
kill "$rl_pid"; wait "$rl_pid" 2>/dev/null || true
must_fail "ratelimitd down, nginx fails open" "quota: 7 of 7 concurrent checks were allowed, expected exactly 5 (the answers carry no X-RateLimit-Limit: nothing asked ratelimitd" \
  --public-url "http://127.0.0.1:$open/v1/orders" --identity-header X-Api-Key --limit 5
must_fail "ratelimitd down, nginx fails closed" "quota: a check got neither 200 nor 429: HTTP 500" \
  --public-url "http://127.0.0.1:$closed/v1/orders" --identity-header X-Api-Key --limit 5
set +e; sh "$probe" --public-url "http://127.0.0.1:$closed/" --limit 5 >/dev/null 2>&1; rc=$?; set -e
[ "$rc" = 2 ] || fail "--public-url without --identity-header: exit $rc, expected 2"
echo "ok    --public-url without --identity-header is a usage error"
echo "PASS: probe through the proxy"
