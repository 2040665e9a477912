#!/usr/bin/env bash
# Benchmarks ratelimitd against ceilings measured in the same run on the same machine:
# nginx `return 204` (the HTTP ceiling) and redis-benchmark EVALSHA of the token-bucket script
# (the per-check-script ceiling of one Redis), plus the Node rate-limiter-flexible peer.
# Everything runs on loopback, every load is bounded in time, everything started is stopped.
# Redis Cluster rows: the same load over clusters of 1, 2 and 3 primaries (started here).
#   bench/run.sh [--duration SECONDS] [--runs N] [--no-node] [--cluster-only]
# Prints one table (median of N runs) and writes it, with the machine it ran on, to
# bench/RESULTS.md, and the latency curves of the run to bench/latency.png (gnuplot).
# --cluster-only measures only the cluster rows and prints them, leaving RESULTS.md alone.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
duration=10 runs=3 node=1 cluster_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --no-node) node=0; shift ;;
    --cluster-only) cluster_only=1; shift ;;
    *) echo "usage: bench/run.sh [--duration SECONDS] [--runs N] [--no-node] [--cluster-only]"; exit 2 ;;
  esac
done

bash scripts/install-deps.sh >/dev/null
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
cmake --build build-release -j2 --target ratelimitd store_bench >/dev/null
bin=$root/build-release/ratelimitd

. bench/lib.sh

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
launch redis-store-solo --redis "redis://127.0.0.1:$redis_port" --coalescing off --denial-cache off; solo_port=$LAUNCH_PORT
launch embedded; em_port=$LAUNCH_PORT; em_pid=$LAUNCH_PID

# --- measurements --------------------------------------------------------------------------
results=$work/results.tsv   # setup, distribution, rps, p50, p99, p999
: >"$results"
mkdir -p "$work/curves"     # one file per wrk row: percentile, ms (the last run's)

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
# CPU seconds redis-server has used so far; the difference over a row, divided by the checks
# of that row, is what one check costs Redis: the figure coalescing lowers, and the one that
# decides how many sidecars one Redis can serve.
redis_cpu() { rcli INFO cpu | tr -d '\r' | awk -F: '/^used_cpu_(sys|user):/{s+=$2} END{printf "%.6f", s}'; }
us_per_check() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN{ if (n > 0) printf "%.1f", (b - a) * 1e6 / n; else print "-" }'; }

measure_wrk() {  # setup, distribution, url, script, TENANTS, uses_redis (1|0)
  local setup=$1 dist=$2 url=$3 script=$4 tenants=$5 uses_redis=${6:-1} out rps p50 p99 p999 cpu0 total=0
  : >"$work/runs"
  cpu0=$(redis_cpu)
  for _ in $(seq 1 "$runs"); do
    rcli FLUSHALL >/dev/null
    TENANTS=$tenants BENCH_DIR=$root/bench wrk -t1 -c32 -d"${duration}s" -s "$script" "$url" >"$work/wrk.out"
    out=$(grep '^RESULT' "$work/wrk.out")
    local req sec
    req=$(echo "$out" | field requests); sec=$(echo "$out" | field seconds)
    total=$((total + req))
    echo "$(awk -v r="$req" -v s="$sec" 'BEGIN{printf "%.0f", r/s}') $(echo "$out" | field p50_ms) $(echo "$out" | field p99_ms) $(echo "$out" | field p999_ms)" >>"$work/runs"
  done
  rps=$(cut -d' ' -f1 "$work/runs" | median); p50=$(cut -d' ' -f2 "$work/runs" | median)
  p99=$(cut -d' ' -f3 "$work/runs" | median); p999=$(cut -d' ' -f4 "$work/runs" | median)
  local cpu="-"
  [ "$uses_redis" = 1 ] && cpu=$(us_per_check "$cpu0" "$(redis_cpu)" "$total")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$setup" "$dist" "$rps" "$p50" "$p99" "$p999" "$cpu" >>"$results"
  { echo "# $setup, $dist"; grep '^CURVE' "$work/wrk.out" | cut -d' ' -f2-; } \
    >"$work/curves/$(wc -l <"$results").dat"
  echo "  $setup / $dist: $rps req/s, p99 $p99 ms" >&2
}

measure_evalsha() {  # pipeline
  local pipeline=$1 sha csv rps p99 cpu0
  sha=$(rcli SCRIPT LOAD "$(cat lua/token_bucket.lua)")
  : >"$work/runs"
  cpu0=$(redis_cpu)
  for _ in $(seq 1 "$runs"); do
    rcli FLUSHALL >/dev/null
    csv=$(redis-benchmark -p "$redis_port" -c 32 -P "$pipeline" -n $((duration * 40000)) -r 10000 --csv \
            EVALSHA "$sha" 1 rl:bench:__rand_int__ 100 60000 100 1 m | tail -1)
    # "test","rps","avg","min","p50","p95","p99","max"
    echo "$csv" | tr -d '"' | awk -F, '{print $2, $5, $7, $8}' >>"$work/runs"
  done
  rps=$(cut -d' ' -f1 "$work/runs" | median); p99=$(cut -d' ' -f3 "$work/runs" | median)
  printf 'redis-benchmark EVALSHA -P%s\trandom 10k keys\t%s\t%s\t%s\t%s\t%s\n' "$pipeline" "$rps" \
    "$(cut -d' ' -f2 "$work/runs" | median)" "$p99" "-" \
    "$(us_per_check "$cpu0" "$(redis_cpu)" $((runs * duration * 40000)))" >>"$results"
  echo "  EVALSHA -P$pipeline: $rps req/s" >&2
}

measure_store() {  # coalescing on|off: the Redis store driven without HTTP (bench/store_bench.cpp)
  local mode=$1 cpu0 out total=0 calls=0 rps
  : >"$work/runs"
  cpu0=$(redis_cpu)
  for _ in $(seq 1 "$runs"); do
    rcli FLUSHALL >/dev/null
    out=$("$root/build-release/store_bench" "redis://127.0.0.1:$redis_port" --seconds "$duration" --threads 1 \
            --concurrency 256 --tenants 10000 --coalescing "$mode" 2>/dev/null)
    echo "$out" | sed -n 's/.*rate=\([0-9]*\).*/\1/p' >>"$work/runs"
    total=$((total + $(echo "$out" | sed -n 's/.*checks=\([0-9]*\).*/\1/p')))
    calls=$((calls + $(echo "$out" | sed -n 's/.*calls=\([0-9]*\).*/\1/p')))
  done
  rps=$(median <"$work/runs")
  printf 'ratelimitd store layer, no HTTP, coalescing %s\trandom 10k keys\t%s\t-\t-\t-\t%s\n' "$mode" "$rps" \
    "$(us_per_check "$cpu0" "$(redis_cpu)" "$total")" >>"$results"
  echo "  store layer, coalescing $mode: $rps checks/s, $(awk -v t=$total -v c=$calls 'BEGIN{printf "%.1f", t/c}') checks per call" >&2
}

# --- Redis Cluster -----------------------------------------------------------------------
# start_cluster N: N primaries, no replicas, on free ports; sets CLUSTER_URL.
start_cluster() {
  local n=$1 i port bus node nodes=() buses=() dir=$work/cluster-$1
  mkdir -p "$dir"
  for i in $(seq 1 "$n"); do
    port=$(pick_port); bus=$(pick_port)
    redis-server --port "$port" --cluster-port "$bus" --bind 127.0.0.1 --cluster-enabled yes \
      --cluster-config-file "$dir/nodes-$port.conf" --save "" --appendonly no --dir "$dir" >"$dir/$port.log" 2>&1 &
    pids+=("$!"); wait_port "$port"
    nodes+=("127.0.0.1:$port"); buses+=("$bus")
  done
  if [ "$n" -ge 3 ]; then
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1
  else  # redis-cli --cluster create wants 3 masters; smaller clusters are put together by hand
    local first=${nodes[0]##*:} slots per=$((16384 / n)) lo hi
    for i in $(seq 1 $((n - 1))); do
      redis-cli -p "$first" CLUSTER MEET 127.0.0.1 "${nodes[$i]##*:}" "${buses[$i]}" >/dev/null
    done
    for i in $(seq 0 $((n - 1))); do
      lo=$((i * per)); hi=$(( i == n - 1 ? 16383 : (i + 1) * per - 1 ))
      redis-cli -p "${nodes[$i]##*:}" CLUSTER ADDSLOTSRANGE "$lo" "$hi" >/dev/null
    done
  fi
  for _ in $(seq 1 400); do
    local ok=1
    for node in "${nodes[@]}"; do
      redis-cli -p "${node##*:}" CLUSTER INFO | grep -q cluster_state:ok || ok=0
    done
    [ "$ok" = 1 ] && break
    sleep 0.05
  done
  CLUSTER_URL="redis-cluster://$(IFS=,; echo "${nodes[*]}")"
  CLUSTER_PORTS=("${nodes[@]##*:}")
}

# measure_cluster N: the store layer (no HTTP) and ratelimitd over HTTP against N primaries.
measure_cluster() {
  local n=$1 out rps p50 p99 port
  start_cluster "$n"
  : >"$work/runs"
  for _ in $(seq 1 "$runs"); do
    for port in "${CLUSTER_PORTS[@]}"; do redis-cli -p "$port" FLUSHALL >/dev/null; done
    out=$("$root/build-release/store_bench" "$CLUSTER_URL" --seconds "$duration" --threads 1 \
            --concurrency 256 --tenants 10000 --coalescing on 2>/dev/null)
    echo "$(echo "$out" | sed -n 's/.*rate=\([0-9]*\).*/\1/p') $(echo "$out" | sed -n 's/.*p50_us=\([0-9]*\).*/\1/p') $(echo "$out" | sed -n 's/.*p99_us=\([0-9]*\).*/\1/p')" >>"$work/runs"
  done
  rps=$(cut -d' ' -f1 "$work/runs" | median)
  p50=$(cut -d' ' -f2 "$work/runs" | median | awk '{printf "%.2f", $1 / 1000}')
  p99=$(cut -d' ' -f3 "$work/runs" | median | awk '{printf "%.2f", $1 / 1000}')
  printf 'ratelimitd store layer, no HTTP, cluster of %s\trandom 10k keys\t%s\t%s\t%s\t-\t-\n' "$n" "$rps" "$p50" "$p99" >>"$results"
  echo "  store layer, cluster of $n: $rps checks/s, p99 $p99 ms" >&2
  launch "cluster-$n" --redis "$CLUSTER_URL"
  measure_wrk "ratelimitd redis-cluster of $n" "uniform 10k" "http://127.0.0.1:$LAUNCH_PORT/v1/check" \
    bench/check.lua 10000 0
}

echo "measuring (median of $runs runs of ${duration}s each)..." >&2
if [ "$cluster_only" = 1 ]; then
  for n in 1 2 3; do measure_cluster "$n"; done
  rps_of() { awk -F'\t' -v s="$1" -v d="$2" '$1==s && $2==d {print $3}' "$results"; }
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a/b }'; }
  echo "| setup | keys | req/s | p50 ms | p99 ms | × 1 primary |"
  echo "|---|---|---:|---:|---:|---:|"
  while IFS=$'\t' read -r setup dist r p50 p99 _; do
    base=$(rps_of "${setup% of [0-9]} of 1" "$dist")
    echo "| $setup | $dist | $r | $p50 | $p99 | $(ratio "$r" "$base") |"
  done <"$results"
  exit 0
fi
measure_wrk "nginx return 204" "-" "http://127.0.0.1:$nginx_port/" bench/plain.lua 1 0
measure_evalsha 16
measure_evalsha 1
measure_store on
measure_store off
for spec in "hot tenant:1" "uniform 10k:10000" "uniform 1M:1000000"; do
  measure_wrk "ratelimitd redis" "${spec%%:*}" "http://127.0.0.1:$rs_port/v1/check" bench/check.lua "${spec##*:}"
done
# Without the fast path: every check its own EVALSHA, no local denial cache.
measure_wrk "ratelimitd redis, coalescing off" "uniform 10k" "http://127.0.0.1:$solo_port/v1/check" bench/check.lua 10000
rss_before=$(ps -o rss= -p "$em_pid")
for spec in "hot tenant:1" "uniform 10k:10000" "uniform 1M:1000000"; do
  measure_wrk "ratelimitd embedded" "${spec%%:*}" "http://127.0.0.1:$em_port/v1/check" bench/check.lua "${spec##*:}" 0
done
rss_after=$(ps -o rss= -p "$em_pid")
for n in 1 2 3; do measure_cluster "$n"; done

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
rps_of() { awk -F'\t' -v s="$1" -v d="$2" '$1==s && $2==d {print $3}' "$results"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a/b }'; }
report=$root/bench/RESULTS.md
plot=$root/bench/latency.png
# bench/cpu.sh keeps its own section of the file: carried over as it is.
cpu_section=$(sed -n '/<!-- cpu.sh begin -->/,/<!-- cpu.sh end -->/p' "$report" 2>/dev/null || true)
# So does bench/callgrind.sh, first in the file: its protection-cost table is what a user compares.
callgrind_section=$(sed -n '/<!-- callgrind.sh begin -->/,/<!-- callgrind.sh end -->/p' "$report" 2>/dev/null || true)
{
  echo "# Benchmark results"
  echo
  [ -z "$callgrind_section" ] || printf '%s\n\n' "$callgrind_section"
  echo "Written by \`bench/run.sh --duration $duration --runs $runs\` on $(date -u +%Y-%m-%dT%H:%MZ)."
  echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(free -g | awk '/Mem:/{print $2}') GiB, Linux $(uname -r)."
  echo "Everything on that machine at once: wrk, redis-server, nginx and ratelimitd (2 server threads) share its cores."
  echo "wrk -t1 -c32 keep-alive, ${duration} s per run, median of $runs runs; redis-benchmark -c32 -r10000 (random keys)."
  echo
  echo "| setup | tenants | req/s | p50 ms | p99 ms | p99.9 ms | × nginx 204 | × EVALSHA -P16 | Redis CPU µs per check |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' -v n="$nginx_rps" -v e="$evalsha_rps" \
    '{printf "| %s | %s | %s | %s | %s | %s | %.2f | %.2f | %s |\n", $1, $2, $3, $4, $5, $6, $3/n, $3/e, $7}' "$results"
  echo
  echo "Cluster rows: every primary, the load generator and ratelimitd share the same 2 cores, so more"
  echo "primaries cannot add throughput here; the ratios below show what routing over N pools costs, not"
  echo "how a cluster of N machines scales. Store-layer p50/p99 are one check's latency, queueing included."
  echo "Redis CPU per check: redis-server's CPU time over the row ÷ the checks of the row. It includes"
  echo "Redis's cost per wake-up (epoll, read, write), so it falls as more commands arrive per wake-up."
  echo "The HTTP rows share the 2 cores with wrk and Redis and saturate on the HTTP side first; the"
  echo "store-layer rows (bench/store_bench.cpp: one thread, 256 checks outstanding, no HTTP) show what"
  echo "one Redis decides through ratelimitd's store with coalescing on and off."
  echo
  echo "Redis MEMORY USAGE per key after one check:$mem."
  echo "ratelimitd embedded RSS: ${rss_before} KiB before the embedded rows, ${rss_after} KiB after them (the 1M-tenant row last)."
  echo
  echo "## Goals of the performance issue, in this run"
  echo
  echo "| goal | wanted | reached |"
  echo "|---|---:|---:|"
  echo "| Redis store, 10k tenants ÷ EVALSHA -P16 | ≥ 1.0 | $(ratio "$(rps_of "ratelimitd redis" "uniform 10k")" "$evalsha_rps") |"
  echo "| Redis store layer without HTTP (coalescing on, 256 outstanding) ÷ EVALSHA -P16 | ≥ 1.0 | $(ratio "$(rps_of "ratelimitd store layer, no HTTP, coalescing on" "random 10k keys")" "$evalsha_rps") |"
  echo "| same, coalescing on ÷ off | — | $(ratio "$(rps_of "ratelimitd store layer, no HTTP, coalescing on" "random 10k keys")" "$(rps_of "ratelimitd store layer, no HTTP, coalescing off" "random 10k keys")") |"
  echo "| Redis store, 10k tenants ÷ Node peer | ≥ 3.0 | $(ratio "$(rps_of "ratelimitd redis" "uniform 10k")" "$(rps_of "node rate-limiter-flexible" "uniform 10k")") |"
  echo "| Redis store, 10k tenants, p99 ms | ≤ 2 | $(awk -F'\t' '$1=="ratelimitd redis" && $2=="uniform 10k"{print $5}' "$results") |"
  echo "| hot tenant (local denial cache) ÷ nginx 204 | ≥ 0.6 | $(ratio "$(rps_of "ratelimitd redis" "hot tenant")" "$nginx_rps") |"
  echo "| embedded store, 10k tenants ÷ nginx 204 | ≥ 0.6 | $(ratio "$(rps_of "ratelimitd embedded" "uniform 10k")" "$nginx_rps") |"
  for n in 2 3; do
    echo "| cluster of $n ÷ cluster of 1, store layer (no HTTP) | — | $(ratio "$(rps_of "ratelimitd store layer, no HTTP, cluster of $n" "random 10k keys")" "$(rps_of "ratelimitd store layer, no HTTP, cluster of 1" "random 10k keys")") |"
    echo "| cluster of $n ÷ cluster of 1, over HTTP | — | $(ratio "$(rps_of "ratelimitd redis-cluster of $n" "uniform 10k")" "$(rps_of "ratelimitd redis-cluster of 1" "uniform 10k")") |"
  done
  echo "| coalescing on ÷ off (Redis store, 10k tenants), req/s | — | $(ratio "$(rps_of "ratelimitd redis" "uniform 10k")" "$(rps_of "ratelimitd redis, coalescing off" "uniform 10k")") |"
  echo
  echo "![latency by percentile](latency.png)"
  [ -z "$cpu_section" ] || printf '\n%s\n' "$cpu_section"
} >"$report"

if command -v gnuplot >/dev/null 2>&1; then
  {
    echo "set terminal pngcairo size 1000,600"
    echo "set output '$plot'"
    echo "set title 'Latency by percentile (wrk -t1 -c32, last run of each row)'"
    echo "set xlabel 'percentile'; set ylabel 'latency, ms'"
    echo "set logscale y; set grid; set key top left font ',9'"
    echo "set xtics ('50' 0, '75' 1, '90' 2, '95' 3, '99' 4, '99.5' 5, '99.9' 6, '99.99' 7)"
    printf 'plot '
    sep=""
    for f in $(ls "$work/curves" | sort -n); do
      title=$(head -1 "$work/curves/$f" | sed 's/^# //; s/'"'"'//g')
      printf "%s'%s' using 0:2 with linespoints title '%s'" "$sep" "$work/curves/$f" "$title"
      sep=", "
    done
    echo
  } >"$work/plot.gp"
  gnuplot "$work/plot.gp" || echo "gnuplot failed; no plot written" >&2
else
  echo "gnuplot is not installed (scripts/install-deps.sh installs it); no plot written" >&2
fi
cat "$report"
