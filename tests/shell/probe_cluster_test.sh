#!/usr/bin/env bash
# scripts/ratelimit-probe on a Redis Cluster: ratelimitd on a real 3-primary redis-cluster://
# store; --redis redis-cluster://ONE_NODE passes (the probe finds every primary and SCANs
# each), and a key without TTL planted on a primary the seed node does not hold is found.
# Usage: probe_cluster_test.sh PATH_TO_RATELIMITD
set -euo pipefail
bin=${1:?path to ratelimitd}
root=$(cd "$(dirname "$0")/../.." && pwd)
probe="$root/scripts/ratelimit-probe"
. "$root/tests/php/lib/servers.sh"
require_tools curl redis-server redis-cli sh

cat >"$work/config.yaml" <<'YAML'
policies:
  # 20 s, not 3: the probe's keys must outlive the steps from the burst to the TTL step, which
  # took over 3 s on a loaded machine (61 keys of 62: a key had expired).
  probe: { algorithm: sliding_log, limit: 5, window: 20s }
YAML
start_redis_cluster 3; seed=$started_port
start_ratelimitd "$bin" "$work/config.yaml" --redis "redis-cluster://127.0.0.1:$seed"
url="http://127.0.0.1:$started_port"

# Keys with a TTL spread over every primary, and one key per primary count check below.
for i in $(seq 1 60); do redis-cli -c -p "$seed" set "rl:filler:t$i:global" 1 EX 600 >/dev/null; done
for p in $cluster_ports; do
  n=$(redis-cli -p "$p" dbsize)
  [ "$n" -gt 0 ] || fail "primary $p holds no key: the test would not show a SCAN of every primary"
done

echo "--- a correct deployment on a cluster"
sh "$probe" --url "$url" --policy probe --limit 5 --redis "redis-cluster://127.0.0.1:$seed" | tee "$work/out" \
  || fail "the probe failed against a correct cluster deployment"
grep -q "ok: ttl: all 62 keys under 'rl:' expire (3 node(s) scanned)" "$work/out" || fail "ttl line: $(grep ttl: "$work/out")"
echo "ok    62 keys over 3 primaries, all with a TTL"

echo "--- a key without TTL on a primary other than the seed"
other=""
for i in $(seq 1 200); do
  k="rl:leftover:t$i:global"
  slot=$(redis-cli -p "$seed" cluster keyslot "$k")
  owner=$(redis-cli -p "$seed" cluster nodes | awk -v s="$slot" '$3 ~ /master/ { for (f = 9; f <= NF; f++) { split($f, r, "-"); if (s >= r[1] && s <= (r[2] == "" ? r[1] : r[2])) { split($2, a, "@"); split(a[1], b, ":"); print b[2] } } }')
  if [ -n "$owner" ] && [ "$owner" != "$seed" ]; then other=$owner; break; fi
done
[ -n "$other" ] || fail "found no key name owned by a primary other than $seed"
redis-cli -p "$other" set "$k" 1 >/dev/null
set +e
sh "$probe" --url "$url" --policy probe --limit 5 --redis "redis-cluster://127.0.0.1:$seed" >"$work/out" 2>&1; rc=$?
set -e
[ "$rc" = 1 ] && grep -q "FAIL: ttl: key '$k' has no TTL" "$work/out" || { cat "$work/out"; fail "expected exit 1 naming $k, got exit $rc"; }
echo "ok    $k (no TTL, on primary $other) found through seed $seed"
echo "PASS: probe on a Redis Cluster"
