#!/usr/bin/env bash
# CPU time per answered request, per server process: the figure that stays steady on a shared
# machine where throughput swings by 2x between runs. For each row a wrk load runs against one
# server; user + sys time of that server (all its threads, from /proc/<pid>/stat) and of
# redis-server over the row, divided by the requests answered, gives µs per request.
#
# Rows: nginx `return 204`; nginx answering the same bytes as a ratelimitd check (status line,
# the same header lines and body, copied from a real check answer at the start of the run);
# ratelimitd embedded (10k random tenants, and one hot tenant: denials); ratelimitd on Redis;
# redis-benchmark EVALSHA of the token-bucket script (-P16: Redis's CPU per check when it is fed
# in batches); the Node rate-limiter-flexible peer on the same Redis, when npm can install it.
#   bench/cpu.sh [--duration SECONDS] [--threads N] [--no-node] [--binary PATH] [--baseline PATH]
#                [--embedded-only]
# --binary measures a ratelimitd built elsewhere instead of building one; --baseline PATH adds
# the ratelimitd rows once more for that binary (an older commit), in the same run, so a change
# is judged against figures taken under the same load; --embedded-only runs just the nginx and
# embedded rows (no Redis, no Node).
# Prints the table and writes it, with the machine and the date, into bench/RESULTS.md between
# the `cpu.sh` markers (bench/run.sh keeps that part when it rewrites the file).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
duration=8 threads=1 node=1 bin="" baseline="" embedded_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --no-node) node=0; shift ;;
    --binary) bin=$(realpath "$2"); shift 2 ;;
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    --embedded-only) embedded_only=1; node=0; shift ;;
    *) echo "usage: bench/cpu.sh [--duration SECONDS] [--threads N] [--no-node] [--binary PATH] [--baseline PATH] [--embedded-only]"; exit 2 ;;
  esac
done

if [ -z "$bin" ]; then
  bash scripts/install-deps.sh >/dev/null
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
  cmake --build build-release -j2 --target ratelimitd >/dev/null
  bin=$root/build-release/ratelimitd
fi

. bench/lib.sh

# CPU ticks (user + sys, every thread) of a process and of its children's live processes: nginx's
# worker is a child of its master, so a row reads both.
ticks_of() {
  local total=0 p
  for p in "$1" $(ps -o pid= --ppid "$1" 2>/dev/null); do
    # Fields after the ")" of the command name: utime is the 12th, stime the 13th.
    total=$((total + $(sed 's/.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)
us_per() { awk -v t="$1" -v hz="$hz" -v n="$2" 'BEGIN{ if (n > 0) printf "%.1f", t / hz * 1e6 / n; else print "-" }'; }

# --- servers -----------------------------------------------------------------------------
redis_port=$(pick_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!; pids+=("$redis_pid"); wait_port "$redis_port"

cat >"$work/bench.yaml" <<'YAML'
policies:
  bench: { algorithm: token_bucket, limit: 100, window: 60s }
YAML
launch() {  # name, binary, extra args... -> sets LAUNCH_PORT, LAUNCH_PID
  local name=$1 binary=$2; shift 2
  "$binary" --config "$work/bench.yaml" --listen 127.0.0.1:0 --threads "$threads" "$@" >"$work/$name.log" 2>&1 &
  LAUNCH_PID=$!; pids+=("$LAUNCH_PID")
  for _ in $(seq 1 200); do grep -q "listening on" "$work/$name.log" 2>/dev/null && break; sleep 0.05; done
  LAUNCH_PORT=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/$name.log" | sed 's/.*://')
}
launch embedded "$bin"; em_port=$LAUNCH_PORT; em_pid=$LAUNCH_PID
launch redis-store "$bin" --redis "redis://127.0.0.1:$redis_port"; rs_port=$LAUNCH_PORT; rs_pid=$LAUNCH_PID
if [ -n "$baseline" ]; then
  launch base-embedded "$baseline"; bem_port=$LAUNCH_PORT; bem_pid=$LAUNCH_PID
  launch base-redis-store "$baseline" --redis "redis://127.0.0.1:$redis_port"; brs_port=$LAUNCH_PORT; brs_pid=$LAUNCH_PID
fi

# The bytes of one allowed check, as ratelimitd answers it: nginx is made to answer the same.
curl -s -D "$work/check.headers" -o "$work/check.body" -X POST "http://127.0.0.1:$em_port/v1/check" \
  -H 'Content-Type: application/json' -d '{"policy":"bench","tenant":"shape"}'
add_headers=$(tr -d '\r' <"$work/check.headers" | grep -v -i -E '^(HTTP/|content-length|content-type|connection|date|server|keep-alive)' \
  | sed -n 's/^\([^:]*\): \(.*\)$/add_header \1 '"'"'\2'"'"';/p')
content_type=$(tr -d '\r' <"$work/check.headers" | sed -n 's/^[Cc]ontent-[Tt]ype: //p')
body=$(cat "$work/check.body")

nginx_port=$(pick_port)
cat >"$work/nginx.conf" <<NGINX
worker_processes 1;
events { worker_connections 1024; }
http {
  access_log off; server_tokens off;
  server {
    listen 127.0.0.1:$nginx_port;
    location = /empty { return 204; }
    location = /v1/check {
      default_type "$content_type";
      $add_headers
      return 200 '$body';
    }
  }
}
NGINX
nginx -p "$work" -c "$work/nginx.conf" -g "daemon off; pid $work/nginx.pid; error_log stderr;" 2>"$work/nginx.log" &
nginx_pid=$!; pids+=("$nginx_pid"); wait_port "$nginx_port"

# --- rows ----------------------------------------------------------------------------------
results=$work/results.tsv   # row, req/s, server µs/req, redis µs/req, p99 ms
: >"$results"
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }

row_wrk() {  # name, url, script, tenants, server pid, uses redis (1|0)
  local name=$1 url=$2 script=$3 tenants=$4 pid=$5 uses_redis=$6 s0 r0 s1 r1 out req sec
  redis-cli -p "$redis_port" FLUSHALL >/dev/null
  s0=$(ticks_of "$pid"); r0=$(ticks_of "$redis_pid")
  TENANTS=$tenants BENCH_DIR=$root/bench wrk -t1 -c32 -d"${duration}s" -s "$script" "$url" >"$work/wrk.out"
  s1=$(ticks_of "$pid"); r1=$(ticks_of "$redis_pid")
  out=$(grep '^RESULT' "$work/wrk.out"); req=$(echo "$out" | field requests); sec=$(echo "$out" | field seconds)
  local redis_us="-"
  [ "$uses_redis" = 1 ] && redis_us=$(us_per $((r1 - r0)) "$req")
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$(awk -v r="$req" -v s="$sec" 'BEGIN{printf "%.0f", r/s}')" \
    "$(us_per $((s1 - s0)) "$req")" "$redis_us" "$(echo "$out" | field p99_ms)" >>"$results"
  echo "  $name: $(tail -1 "$results" | cut -f2) req/s, $(tail -1 "$results" | cut -f3) µs/req" >&2
}

row_evalsha() {  # pipeline
  local n=$((duration * 40000)) sha r0 r1 csv
  sha=$(redis-cli -p "$redis_port" SCRIPT LOAD "$(cat lua/token_bucket.lua)")
  redis-cli -p "$redis_port" FLUSHALL >/dev/null
  r0=$(ticks_of "$redis_pid")
  csv=$(redis-benchmark -p "$redis_port" -c 32 -P "$1" -n "$n" -r 10000 --csv \
          EVALSHA "$sha" 1 rl:bench:__rand_int__ 100 60000 100 1 m | tail -1)
  r1=$(ticks_of "$redis_pid")
  printf 'redis-benchmark EVALSHA -P%s\t%s\t-\t%s\t%s\n' "$1" "$(echo "$csv" | tr -d '"' | cut -d, -f2 | cut -d. -f1)" \
    "$(us_per $((r1 - r0)) "$n")" "$(echo "$csv" | tr -d '"' | cut -d, -f7)" >>"$results"
}

echo "measuring CPU per request (${duration}s per row, --threads $threads)..." >&2
row_wrk "nginx return 204, 1 worker" "http://127.0.0.1:$nginx_port/empty" bench/plain.lua 1 "$nginx_pid" 0
row_wrk "nginx same bytes as a check, 1 worker" "http://127.0.0.1:$nginx_port/v1/check" bench/check.lua 10000 "$nginx_pid" 0
row_wrk "ratelimitd embedded, 10k tenants" "http://127.0.0.1:$em_port/v1/check" bench/check.lua 10000 "$em_pid" 0
row_wrk "ratelimitd embedded, hot tenant (denials)" "http://127.0.0.1:$em_port/v1/check" bench/check.lua 1 "$em_pid" 0
if [ "$embedded_only" = 0 ]; then
  row_wrk "ratelimitd on Redis, 10k tenants" "http://127.0.0.1:$rs_port/v1/check" bench/check.lua 10000 "$rs_pid" 1
  row_evalsha 16
fi
if [ -n "$baseline" ]; then
  row_wrk "baseline: embedded, 10k tenants" "http://127.0.0.1:$bem_port/v1/check" bench/check.lua 10000 "$bem_pid" 0
  row_wrk "baseline: embedded, hot tenant (denials)" "http://127.0.0.1:$bem_port/v1/check" bench/check.lua 1 "$bem_pid" 0
  if [ "$embedded_only" = 0 ]; then
    row_wrk "baseline: on Redis, 10k tenants" "http://127.0.0.1:$brs_port/v1/check" bench/check.lua 10000 "$brs_pid" 1
  fi
fi
if [ "$node" = 1 ] && command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 &&
   (cd "$work" && npm install --silent --no-audit --no-fund rate-limiter-flexible ioredis >/dev/null 2>&1); then
  node_port=$(pick_port)
  NODE_PATH=$work/node_modules REDIS_PORT=$redis_port PORT=$node_port node bench/node_peer.js >"$work/node.log" 2>&1 &
  node_pid=$!; pids+=("$node_pid"); wait_port "$node_port"
  row_wrk "Node rate-limiter-flexible on Redis, 10k tenants" "http://127.0.0.1:$node_port/v1/check" bench/check.lua 10000 "$node_pid" 1
else
  echo "  Node peer skipped (--no-node, or npm could not install it)" >&2
fi

# --- report --------------------------------------------------------------------------------
col() { awk -F'\t' -v r="$1" -v c="$2" '$1==r {print $c}' "$results"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (a == "" || b == "" || a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a/b }'; }
same="nginx same bytes as a check, 1 worker"
section=$work/section.md
{
  echo "<!-- cpu.sh begin -->"
  echo "## CPU per request (bench/cpu.sh)"
  echo
  echo "Written by \`bench/cpu.sh --duration $duration --threads $threads\` on $(date -u +%Y-%m-%dT%H:%MZ)."
  if [ -n "$baseline" ]; then
    echo "\"baseline\" rows: the same rows in the same run, for the binary given with --baseline (${BASELINE_NOTE:-an older build})."
  fi
  echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), Linux $(uname -r)."
  echo "wrk -t1 -c32 keep-alive, ${duration} s per row, one run. CPU: user + sys of the server process"
  echo "(all threads; nginx master + worker) and of redis-server, from /proc, over the row ÷ requests answered."
  echo "\"Same bytes\": nginx answers the status line, header lines and body of a real ratelimitd check."
  echo
  echo "| row | req/s | server CPU µs/req | redis CPU µs/req | p99 ms | server CPU × nginx same bytes |"
  echo "|---|---:|---:|---:|---:|---:|"
  while IFS=$'\t' read -r name rps server redis p99; do
    echo "| $name | $rps | $server | $redis | $p99 | $(ratio "$server" "$(col "$same" 3)") |"
  done <"$results"
  echo
  echo "| goal of the performance issue | wanted | this run |"
  echo "|---|---:|---:|"
  echo "| embedded check ÷ nginx same bytes, CPU µs/req | ≤ 1.2 | $(ratio "$(col "ratelimitd embedded, 10k tenants" 3)" "$(col "$same" 3)") |"
  if [ -n "$baseline" ]; then
    echo "| the same, baseline binary | – | $(ratio "$(col "baseline: embedded, 10k tenants" 3)" "$(col "$same" 3)") |"
  fi
  echo "| Redis check, sidecar CPU ÷ nginx same bytes | ≤ 1.5 | $(ratio "$(col "ratelimitd on Redis, 10k tenants" 3)" "$(col "$same" 3)") |"
  echo "| redis-server CPU per check ÷ its cost under EVALSHA -P16 | ≤ 0.8 | $(ratio "$(col "ratelimitd on Redis, 10k tenants" 4)" "$(col "redis-benchmark EVALSHA -P16" 4)") |"
  echo "| Node peer CPU ÷ sidecar CPU per check | ≥ 3 | $(ratio "$(col "Node rate-limiter-flexible on Redis, 10k tenants" 3)" "$(col "ratelimitd on Redis, 10k tenants" 3)") |"
  echo "| sidecar req/s ÷ Node peer req/s | ≥ 2 | $(ratio "$(col "ratelimitd on Redis, 10k tenants" 2)" "$(col "Node rate-limiter-flexible on Redis, 10k tenants" 2)") |"
  echo "<!-- cpu.sh end -->"
} >"$section"

report=$root/bench/RESULTS.md
if [ -f "$report" ] && grep -q '<!-- cpu.sh begin -->' "$report"; then
  # Replace the previous cpu.sh section, keep the rest of the file.
  awk -v s="$section" '/<!-- cpu.sh begin -->/{while ((getline l < s) > 0) print l; skip=1; next}
                       /<!-- cpu.sh end -->/{skip=0; next} !skip' "$report" >"$work/report.new"
  mv "$work/report.new" "$report"
else
  { [ -f "$report" ] && cat "$report" && echo; cat "$section"; } >"$work/report.new"
  mv "$work/report.new" "$report"
fi
cat "$section"
