#!/usr/bin/env bash
# The RLQS door's cost per report against a real redis-server: reports of 1, 10 and 100
# distinct budgeted buckets, sent by rlqs_bench on STREAMS streams as fast as answers come.
# For each size: reports per second, reports and bucket reports per CPU-second of ratelimitd
# (utime + stime from /proc, so "per core"), Redis calls per report (EVALSHA from INFO
# commandstats, reset before each size; the commands per bucket count the script's own TIME,
# HGETALL, HSET and PEXPIRE too) and Redis CPU per bucket, with the ratios to the 1-bucket row of the same
# run. Not part of the test suite; everything started is stopped on exit.
# --top-k K is passed to ratelimitd (0: the buckets' heavy hitters off, to price them).
#   bench/rlqs.sh [--duration SECONDS] [--streams N] [--build DIR] [--top-k K]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=5 streams=4 build=build-release top_k=20
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --streams) streams=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --top-k) top_k=$2; shift 2 ;;
    *) echo "usage: bench/rlqs.sh [--duration SECONDS] [--streams N] [--build DIR] [--top-k K]"; exit 2 ;;
  esac
done

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target ratelimitd rlqs_bench >/dev/null

. bench/lib.sh

redis_port=$(pick_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=("$!"); wait_port "$redis_port"
rcli() { redis-cli -p "$redis_port" "$@"; }

cat >"$work/rlqs.yaml" <<'YAML'
rlqs:
  web:
    tenants:
      match: {kind: api}
      limit: 100000000
      window: 1m
      reporting_interval: 200ms
YAML
grpc_port=$(pick_port)
"$build/ratelimitd" --config "$work/rlqs.yaml" --listen 127.0.0.1:0 --grpc-listen "127.0.0.1:$grpc_port" \
  --redis "redis://127.0.0.1:$redis_port" --top-k "$top_k" >"$work/ratelimitd.log" 2>&1 &
rl_pid=$!; pids+=("$rl_pid"); wait_port "$grpc_port"

ticks=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
redis_cpu() { rcli INFO cpu | tr -d '\r' | awk -F: '/^used_cpu_(user|sys):/ {s += $2} END {printf "%.6f", s}'; }
evalsha_calls() { rcli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p'; }
all_calls() { rcli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_[^:]*:calls=\([0-9]*\),.*/\1/p' | awk '{s += $1} END {print s + 0}'; }

# Warm-up: scripts loaded, connections pooled, buckets' hashes made.
"$build/rlqs_bench" "$grpc_port" 10 "$streams" 1 >/dev/null

echo "bench/rlqs.sh: $streams streams, ${duration} s per size, $(nproc) cores ($(uname -m)), $(date -u +%F)"
printf '| buckets per report | reports/s | ratelimitd CPU (cores) | reports per CPU-s | bucket reports per CPU-s (ratio to 1) | EVALSHA per report | Redis commands per bucket | Redis CPU per bucket (µs) |\n'
printf '|---|---|---|---|---|---|---|---|\n'
base=""
for buckets in 1 10 100; do
  rcli CONFIG RESETSTAT >/dev/null
  cpu0=$(cpu_ticks "$rl_pid"); rcpu0=$(redis_cpu)
  out=$("$build/rlqs_bench" "$grpc_port" "$buckets" "$streams" "$duration")
  cpu1=$(cpu_ticks "$rl_pid"); rcpu1=$(redis_cpu)
  reports=$(awk '{print $2}' <<<"$out")
  evalsha=$(evalsha_calls); calls=$(all_calls)
  awk -v b="$buckets" -v r="$reports" -v d="$duration" -v c0="$cpu0" -v c1="$cpu1" -v t="$ticks" \
      -v e="${evalsha:-0}" -v a="$calls" -v r0="$rcpu0" -v r1="$rcpu1" -v base="$base" 'BEGIN {
    cpu = (c1 - c0) / t
    per_cpu = r / cpu; bucket_per_cpu = r * b / cpu
    ratio = base == "" ? 1 : bucket_per_cpu / base
    printf "| %d | %.0f | %.2f | %.0f | %.0f (%.2f) | %.2f | %.2f | %.1f |\n",
      b, r / d, cpu / d, per_cpu, bucket_per_cpu, ratio, e / r, a / (r * b), (r1 - r0) * 1e6 / (r * b)
  }'
  if [ -z "$base" ]; then base=$(awk -v r="$reports" -v c0="$cpu0" -v c1="$cpu1" -v t="$ticks" 'BEGIN {print r / ((c1 - c0) / t)}'); fi
done
