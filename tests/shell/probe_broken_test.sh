#!/usr/bin/env bash
# scripts/ratelimit-probe FAILS (exit 1, a message naming the broken check) against broken
# deployments: a limit higher than the probe expects; two embedded-store instances behind
# one nginx address; a Redis key without a TTL; --redis naming a Redis the deployment does
# not use; nothing listening; Redis down (readyz 503; with --no-readyz: "degraded", not "more
# than the quota"); and fakes (tests/php/fake_deployment.php) whose 429 lacks Retry-After,
# whose tenants share one budget, whose budget never comes back, or whose answers are all
# degraded although /readyz says ready.
# Usage: probe_broken_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
probe="$root/scripts/ratelimit-probe"
. "$root/tests/php/lib/servers.sh"
require_tools curl redis-server redis-cli sh
require_php
PATH="$PATH:/usr/sbin"; require_tools nginx

# must_fail NAME EXPECTED_MESSAGE PROBE_ARGS...: the probe exits 1 and says EXPECTED_MESSAGE.
must_fail() {
  local name=$1 expected=$2 rc
  shift 2
  set +e
  sh "$probe" --max-wait 5 "$@" >"$work/out" 2>&1; rc=$?
  set -e
  if [ "$rc" != 1 ] || ! grep -q -- "FAIL: $expected" "$work/out"; then
    cat "$work/out"
    fail "$name: expected exit 1 with 'FAIL: $expected', got exit $rc"
  fi
  echo "ok    $name: $(grep FAIL: "$work/out")"
}

cat >"$work/limit5.yaml" <<'YAML'
policies:
  probe: { algorithm: sliding_log, limit: 5, window: 3s }
YAML
cat >"$work/limit7.yaml" <<'YAML'
policies:
  probe: { algorithm: sliding_log, limit: 7, window: 3s }
YAML

start_redis; redis_port=$started_port; redis="redis://127.0.0.1:$redis_port"

start_ratelimitd "$bin" "$work/limit7.yaml" --redis "$redis"
must_fail "limit higher than expected" "quota: 7 of 7 concurrent checks were allowed, expected exactly 5 (the deployment reports X-RateLimit-Limit: 7)" \
  --url "http://127.0.0.1:$started_port" --policy probe --limit 5

start_ratelimitd "$bin" "$work/limit5.yaml"; a=$started_port   # embedded stores: limits per instance
start_ratelimitd "$bin" "$work/limit5.yaml"; b=$started_port
start_nginx_round_robin "$a" "$b"
must_fail "two embedded stores behind one address" "quota: 8 of 8 concurrent checks were allowed, expected exactly 5 (each answer reports X-RateLimit-Limit: 5, so the instances behind .* do not share one store" \
  --url "http://127.0.0.1:$started_port" --policy probe --limit 5 --extra 3
must_fail "--redis naming a Redis the deployment does not use" "ttl: key .* not found" \
  --url "http://127.0.0.1:$a" --policy probe --limit 5 --redis "$redis"

start_ratelimitd "$bin" "$work/limit5.yaml" --redis "$redis"; good=$started_port
redis-cli -p "$redis_port" set rl:probe:leftover:global 1 >/dev/null   # written without EXPIRE
must_fail "a key without TTL" "ttl: key 'rl:probe:leftover:global' has no TTL" \
  --url "http://127.0.0.1:$good" --policy probe --limit 5 --redis "$redis"
redis-cli -p "$redis_port" del rl:probe:leftover:global >/dev/null
must_fail "an unknown policy" "quota: a check got neither 200 nor 429: HTTP 400" \
  --url "http://127.0.0.1:$good" --policy nosuchpolicy --limit 5

# Nothing listens on a port a freshly stopped server just used.
start_ratelimitd "$bin" "$work/limit5.yaml"; gone=$started_port; kill "$started_pid"; wait "$started_pid" 2>/dev/null || true
must_fail "nothing listening" "readyz: no answer from" \
  --url "http://127.0.0.1:$gone" --policy probe --limit 5

echo "--- Redis down under a fail-open policy"
start_redis; down_pid=$started_pid
start_ratelimitd "$bin" "$work/limit5.yaml" --redis "redis://127.0.0.1:$started_port"; nostore=$started_port
kill "$down_pid"; wait "$down_pid" 2>/dev/null || true
# Until ratelimitd itself has noticed (a bound, not a delay: start_bound, for a loaded machine).
readyz_unready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$nostore/readyz")" = 503 ]; }
poll_until "$start_bound" readyz_unready || true
must_fail "Redis down: /readyz is checked first" "readyz: .*/readyz answers 503: ratelimitd is up but its store does not answer" \
  --url "http://127.0.0.1:$nostore" --policy probe --limit 5
must_fail "Redis down, --no-readyz: the answers are degraded" "quota: 7 of 7 answers are degraded (X-RateLimit-Degraded: store_unavailable)" \
  --url "http://127.0.0.1:$nostore" --policy probe --limit 5 --no-readyz

for bug in no-retry-after shared-tenants no-recovery degraded; do
  start_php_server "$root/tests/php/fake_deployment.php" FAKE_LIMIT=5 FAKE_BUG=$bug FAKE_STATE="$work/fake-$bug.json"
  : >"$work/fake-$bug.json"   # forget the start-up probe's request
  case $bug in
    no-retry-after) expected="a 429 of the burst has no positive Retry-After" ;;
    shared-tenants) expected="isolation: a fresh tenant got 429" ;;
    no-recovery) expected="recovery: 1 s after Retry-After: 1 the check got 429" ;;
    degraded) expected="quota: 7 of 7 answers are degraded (X-RateLimit-Degraded: store_timeout)" ;;
  esac
  must_fail "fake deployment: $bug" "$expected" --url "http://127.0.0.1:$started_port" --policy probe --limit 5
done
echo "PASS: the probe fails against every broken deployment"
