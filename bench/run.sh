#!/usr/bin/env bash
# Benchmarks ratelimitd against ceilings measured in the same run on the same machine:
# nginx `return 204` (the HTTP ceiling) and redis-benchmark EVALSHA of the token-bucket script
# (the per-check-script ceiling of one Redis), plus the Node rate-limiter-flexible peer.
# Everything runs on loopback, every load is bounded in time, everything started is stopped.
#   bench/run.sh [--duration SECONDS] [--runs N] [--no-node]
# Prints one table (median of N runs) and writes it to bench/results/latest.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
duration=10 runs=3 node=1
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --no-node) node=0; shift ;;
    *) echo "usage: bench/run.sh [--duration SECONDS] [--runs N] [--no-node]"; exit 2 ;;
  esac
done

bash scripts/install-deps.sh >/dev/null
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
cmake --build build-release -j2 --target ratelimitd >/dev/null
bin=$root/build-release/ratelimitd

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

port_in_use() { (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() { local p; while :; do p=$(shuf -i 20000-60000 -n 1); port_in_use "$p" || { echo "$p"; return; }; done; }
wait_port() { for _ in $(seq 1 200); do port_in_use "$1" && return 0; sleep 0.05; done; echo "nothing listens on $1" >&2; return 1; }

# --- servers -----------------------------------------------------------------------------
redis_port=$(pick_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=("$!"); wait_port "$redis_port"
rcli() { redis-cli -p "$redis_port" "$@"; }

nginx_port=$(pick_port)
cat >"$work/nginx.conf" <<NGINX
worker_processes 1;
events { worker_connections 1024; }
http { access_log off; server { listen 127.0.0.1:$nginx_port; location / { return 204; } } }
NGINX
nginx -p "$work" -c "$work/nginx.conf" -g "daemon off; pid $work/nginx.pid; error_log stderr;" 2>"$work/nginx.log" &
pids+=("$!"); wait_port "$nginx_port"

cat >"$work/bench.yaml" <<'YAML'
policies:
  bench:
    algorithm: token_bucket
    limit: 100
    window: 60s
  tb: { algorithm: token_bucket, limit: 100, window: 60s }
  sl: { algorithm: sliding_log, limit: 100, window: 60s }
  fw: { algorithm: fixed_window, limit: 100, window: 60s }
YAML
launch() {  # name, extra args... -> sets LAUNCH_PORT, LAUNCH_PID
  local name=$1; shift
  "$bin" --config "$work/bench.yaml" --listen 127.0.0.1:0 --threads 2 "$@" >"$work/$name.log" 2>&1 &
  LAUNCH_PID=$!; pids+=("$LAUNCH_PID")
  for _ in $(seq 1 200); do grep -q "listening on" "$work/$name.log" 2>/dev/null && break; sleep 0.05; done
  LAUNCH_PORT=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/$name.log" | sed 's/.*://')
}
launch redis-store --redis "redis://127.0.0.1:$redis_port"; rs_port=$LAUNCH_PORT
launch embedded; em_port=$LAUNCH_PORT; em_pid=$LAUNCH_PID

# --- measurements --------------------------------------------------------------------------
results=$work/results.tsv   # setup, distribution, rps, p50, p99, p999
: >"$results"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }

measure_wrk() {  # setup, distribution, url, script, TENANTS
  local setup=$1 dist=$2 url=$3 script=$4 tenants=$5 out rps p50 p99 p999
  : >"$work/runs"
  for _ in $(seq 1 "$runs"); do
    rcli FLUSHALL >/dev/null
    out=$(TENANTS=$tenants wrk -t1 -c32 -d"${duration}s" -s "$script" "$url" | grep '^RESULT')
    local req sec
    req=$(echo "$out" | field requests); sec=$(echo "$out" | field seconds)
    echo "$(awk -v r="$req" -v s="$sec" 'BEGIN{printf "%.0f", r/s}') $(echo "$out" | field p50_ms) $(echo "$out" | field p99_ms) $(echo "$out" | field p999_ms)" >>"$work/runs"
  done
  rps=$(cut -d' ' -f1 "$work/runs" | median); p50=$(cut -d' ' -f2 "$work/runs" | median)
  p99=$(cut -d' ' -f3 "$work/runs" | median); p999=$(cut -d' ' -f4 "$work/runs" | median)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$setup" "$dist" "$rps" "$p50" "$p99" "$p999" >>"$results"
  echo "  $setup / $dist: $rps req/s, p99 $p99 ms" >&2
}

measure_evalsha() {  # pipeline
  local pipeline=$1 sha csv rps p99
  sha=$(rcli SCRIPT LOAD "$(cat lua/token_bucket.lua)")
  : >"$work/runs"
  for _ in $(seq 1 "$runs"); do
    rcli FLUSHALL >/dev/null
    csv=$(redis-benchmark -p "$redis_port" -c 32 -P "$pipeline" -n $((duration * 40000)) -r 10000 --csv \
            EVALSHA "$sha" 1 rl:bench:__rand_int__ 100 60000 100 1 m | tail -1)
    # "test","rps","avg","min","p50","p95","p99","max"
    echo "$csv" | tr -d '"' | awk -F, '{print $2, $5, $7, $8}' >>"$work/runs"
  done
  rps=$(cut -d' ' -f1 "$work/runs" | median); p99=$(cut -d' ' -f3 "$work/runs" | median)
  printf 'redis-benchmark EVALSHA -P%s\trandom 10k keys\t%s\t%s\t%s\t%s\n' "$pipeline" "$rps" \
    "$(cut -d' ' -f2 "$work/runs" | median)" "$p99" "-" >>"$results"
  echo "  EVALSHA -P$pipeline: $rps req/s" >&2
}

echo "measuring (median of $runs runs of ${duration}s each)..." >&2
measure_wrk "nginx return 204" "-" "http://127.0.0.1:$nginx_port/" bench/plain.lua 1
measure_evalsha 16
measure_evalsha 1
for spec in "hot tenant:1" "uniform 10k:10000" "uniform 1M:1000000"; do
  measure_wrk "ratelimitd redis" "${spec%%:*}" "http://127.0.0.1:$rs_port/v1/check" bench/check.lua "${spec##*:}"
done
rss_before=$(ps -o rss= -p "$em_pid")
for spec in "hot tenant:1" "uniform 10k:10000" "uniform 1M:1000000"; do
  measure_wrk "ratelimitd embedded" "${spec%%:*}" "http://127.0.0.1:$em_port/v1/check" bench/check.lua "${spec##*:}"
done
rss_after=$(ps -o rss= -p "$em_pid")

if [ "$node" = 1 ] && command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
  if (cd "$work" && npm install --silent --no-audit --no-fund rate-limiter-flexible ioredis >/dev/null 2>&1); then
    node_port=$(pick_port)
    NODE_PATH=$work/node_modules REDIS_PORT=$redis_port PORT=$node_port node bench/node_peer.js >"$work/node.log" 2>&1 &
    pids+=("$!"); wait_port "$node_port"
    measure_wrk "node rate-limiter-flexible" "uniform 10k" "http://127.0.0.1:$node_port/v1/check" bench/check.lua 10000
  else
    echo "  node peer skipped: npm install failed" >&2
  fi
fi

# Redis memory per key, one key per algorithm after one check.
rcli FLUSHALL >/dev/null
mem=""
for p in tb sl fw; do
  curl -s -o /dev/null -X POST "http://127.0.0.1:$rs_port/v1/check" -d "{\"policy\":\"$p\",\"tenant\":\"mem\"}"
  mem="$mem $p=$(rcli MEMORY USAGE "rl:$p:mem:global")B"
done

# --- report --------------------------------------------------------------------------------
nginx_rps=$(awk -F'\t' '$1=="nginx return 204"{print $3}' "$results")
evalsha_rps=$(awk -F'\t' '$1=="redis-benchmark EVALSHA -P16"{print $3}' "$results")
report=$root/bench/results/latest.md
mkdir -p "$root/bench/results"
{
  echo "Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -r); $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "wrk -t1 -c32 -d${duration}s keep-alive, median of $runs; redis-benchmark -c32 -r10000."
  echo
  echo "| setup | tenants | req/s | p50 ms | p99 ms | p99.9 ms | × nginx 204 | × EVALSHA -P16 |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' -v n="$nginx_rps" -v e="$evalsha_rps" \
    '{printf "| %s | %s | %s | %s | %s | %s | %.2f | %.2f |\n", $1, $2, $3, $4, $5, $6, $3/n, $3/e}' "$results"
  echo
  echo "Redis MEMORY USAGE per key after one check:$mem"
  echo "ratelimitd embedded RSS: ${rss_before} KiB before the embedded rows, ${rss_after} KiB after them (the 1M-tenant row last)."
} >"$report"
cat "$report"
