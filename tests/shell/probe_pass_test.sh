#!/usr/bin/env bash
# scripts/ratelimit-probe passes against a correct deployment: two ratelimitd instances that
# share one redis-server, behind nginx round-robin (as in production), including the --redis
# TTL check over a constant number of Redis connections and bounded by --max-keys; and its
# usage handling (--help exits 0, missing or bad arguments exit 2).
# Usage: probe_pass_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
probe="$root/scripts/ratelimit-probe"
. "$root/tests/php/lib/servers.sh"
require_tools curl redis-server redis-cli sh
PATH="$PATH:/usr/sbin"; require_tools nginx

echo "--- usage"
"$probe" --help | grep -q '^Usage: ratelimit-probe' || fail "--help prints no usage"
set +e
"$probe" --policy probe --limit 5 >/dev/null 2>&1; rc_missing=$?
"$probe" --url http://127.0.0.1:9 --policy probe --limit five >/dev/null 2>&1; rc_bad=$?
set -e
[ "$rc_missing" = 2 ] || fail "missing --url: exit $rc_missing, expected 2"
[ "$rc_bad" = 2 ] || fail "--limit five: exit $rc_bad, expected 2"
echo "ok    --help exits 0; usage errors exit 2"

cat >"$work/config.yaml" <<'YAML'
policies:
  probe:
    algorithm: sliding_log
    limit: 5
    # The probe's key must live from the burst to the TTL step (it expires a window after the
    # last admitted check): a loaded machine took over 5 s, and a 5 s window then failed the
    # test with 301 keys of 302. The recovery step sleeps Retry-After, up to one window.
    window: 20s
YAML
start_redis; redis_port=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"; a=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis://127.0.0.1:$redis_port"; b=$started_port
start_nginx_round_robin "$a" "$b"; url="http://127.0.0.1:$started_port"

# 300 keys the deployment might hold, each with a TTL: the TTL step must read them over a
# constant number of connections (one SCAN + one pipeline), not one redis-cli per key.
for i in $(seq 1 300); do printf 'SET rl:filler:t%s:global 1 EX 600\n' "$i"; done | redis-cli -p "$redis_port" >/dev/null
connections() { redis-cli -p "$redis_port" info stats | tr -d '\r' | sed -n 's/^total_connections_received://p'; }
before=$(connections)

echo "--- two instances, one Redis, behind nginx: the probe must pass"
start=$(date +%s)
# `sh`, not bash: the probe promises POSIX sh (dash on Debian).
sh "$probe" --url "$url" --policy probe --limit 5 --extra 4 --redis "redis://127.0.0.1:$redis_port" | tee "$work/out" \
  || fail "the probe failed against a correct deployment"
elapsed=$(( $(date +%s) - start ))
for step in quota: denied: isolation: ttl: recovery: PASS; do
  grep -q "$step" "$work/out" || fail "the probe's output lacks the '$step' step"
done
grep -q 'ok: quota: 5 of 9 concurrent checks allowed' "$work/out" || fail "quota line: $(grep quota: "$work/out")"
waited=$(sed -n 's/.*waiting \([0-9]*\) s (Retry-After).*/\1/p' "$work/out")
[ -n "$waited" ] && [ "$waited" -ge 1 ] && [ "$elapsed" -ge "$waited" ] \
  || fail "the probe did not wait for Retry-After (${waited:-?} s) before the recovery step (took ${elapsed}s)"
opened=$(( $(connections) - before - 1 ))   # the last INFO is a connection of its own
[ "$opened" -le 6 ] || fail "the probe opened $opened Redis connections for 302 keys (expected at most 6: ping, exists, one SCAN, one pipeline)"
grep -q "ok: ttl: all 302 keys under 'rl:' expire" "$work/out" || fail "ttl line: $(grep ttl: "$work/out")"
echo "ok    ttl: 302 keys checked over $opened Redis connections"

sh "$probe" --url "$url" --policy probe --limit 5 --extra 4 --redis "redis://127.0.0.1:$redis_port" --max-keys 50 >"$work/out2" \
  || { cat "$work/out2"; fail "the probe failed with --max-keys 50"; }
grep -q "ok: ttl: the first 50 keys under 'rl:' expire (stopped at --max-keys 50)" "$work/out2" || fail "--max-keys: $(grep ttl: "$work/out2")"
echo "ok    --max-keys 50 bounds the TTL step and says so"
echo "PASS: probe against a correct deployment (${elapsed}s)"
