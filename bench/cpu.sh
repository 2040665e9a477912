#!/usr/bin/env bash
# CPU time per answered request, per server process: the figure that stays steady on a shared
# machine where throughput swings by 2x between runs. For each row a load runs against one
# server; user + sys time of that server (all its threads, from /proc/<pid>/stat) and of
# redis-server over the row, divided by the requests answered, gives µs per request.
#
# Rows: nginx `return 204`; nginx answering the same bytes as a ratelimitd check (status line,
# the same header lines and body, copied from a real check answer at the start of the run);
# ratelimitd embedded (10k random tenants, and one hot tenant: denials); ratelimitd on Redis;
# what protecting an API costs, per proxied request and summed over every process it passes:
# nginx with the shipped config/nginx/ratelimitd.conf (auth_request to the embedded ratelimitd,
# hashed X-Api-Key) in front of an API (an nginx `return 200`), against nginx's own limit_req
# keyed by X-Api-Key in front of the same API; the per-check EVALSHA baseline, rate-matched (below); redis-benchmark EVALSHA -P16 at full
# speed (the old baseline, kept for reference); the rows of --baseline; the Node
# rate-limiter-flexible peer on the same Redis, when npm can install it.
#
# Rounds: the rows run interleaved, every row once per round, --rounds times, so a burst of load
# from elsewhere on the machine lands on every row alike instead of on whichever row ran then.
# Each figure is reported as its median over the rounds, CPU per request with its spread
# (min–max); each goal ratio is taken within a round (both rows of the same round) and reported
# as the median and min–max of those per-round ratios.
#
# The EVALSHA baseline does the same work as the Redis row: bench/evalsha_driver.py runs a
# FROZEN copy of the token-bucket script (bench/baseline_token_bucket.lua, not lua/, which
# changes), per-check EVALSHA pipelined in batches of the mean batch the sidecar sent in that
# round's Redis row (its /metrics counters), on the same keys (the sidecar's key layout, found
# from a probe check) of the same 10k random tenants, at the rate the Redis row reached in that
# round. A baseline hitting each key faster than the HTTP row would find fewer expired keys and
# re-create fewer, which is cheaper work.
#
# "No key" share: the fraction of checks whose bucket key was absent (never written, or expired:
# the costlier path that creates it). Every row starts from FLUSHALL, so at least 10k checks per
# row find no key. Counted from redis INFO stats keyspace_misses over the row ÷ checks answered:
# on Redis 7.0 a token-bucket check reads its key once when absent (TYPE: one miss) and twice
# when present (TYPE, HMGET: two hits, no miss); writes (HSET, PEXPIRE, DEL) and TIME count
# nothing. So the misses are the checks that found no key, as long as the script reads an
# absent key exactly once (true of the frozen script; a changed script must keep it so).
#
#   bench/cpu.sh [--duration SECONDS] [--rounds N] [--threads N] [--no-node] [--binary PATH]
#                [--baseline PATH] [--embedded-only]
# --duration is per row and round; --binary measures a ratelimitd built elsewhere instead of
# building one; --baseline PATH adds the ratelimitd rows once more for that binary (an older
# commit), in each round, so a change is judged against figures taken under the same load;
# --embedded-only runs just the nginx and embedded rows (no Redis, no Node).
# Prints the table and writes it, with the machine and the date, into bench/RESULTS.md between
# the `cpu.sh` markers (bench/run.sh keeps that part when it rewrites the file).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
usage="usage: bench/cpu.sh [--duration SECONDS] [--rounds N] [--threads N] [--no-node] [--binary PATH] [--baseline PATH] [--embedded-only]"
duration=8 rounds=3 threads=1 node=1 bin="" baseline="" embedded_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --no-node) node=0; shift ;;
    --binary) bin=$(realpath "$2"); shift 2 ;;
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    --embedded-only) embedded_only=1; node=0; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
[ "$rounds" -ge 1 ] 2>/dev/null || { echo "--rounds must be a positive integer" >&2; exit 2; }

if [ -z "$bin" ]; then
  bash scripts/install-deps.sh >/dev/null
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
  cmake --build build-release -j2 --target ratelimitd >/dev/null
  bin=$root/build-release/ratelimitd
fi

# shellcheck source-path=SCRIPTDIR/..
. bench/lib.sh

# The rows' names: the report and the goal ratios find rows by them.
row_204="nginx return 204, 1 worker"
row_same="nginx same bytes as a check, 1 worker"
row_em="ratelimitd embedded, 10k tenants"
row_hot="ratelimitd embedded, hot tenant (denials)"
row_redis="ratelimitd on Redis, 10k tenants"
row_matched="EVALSHA baseline, rate-matched (frozen script)"
row_p16="redis-benchmark EVALSHA -P16, full speed"
row_base_em="baseline: embedded, 10k tenants"
row_base_hot="baseline: embedded, hot tenant (denials)"
row_base_redis="baseline: on Redis, 10k tenants"
row_node="Node rate-limiter-flexible on Redis, 10k tenants"
row_protect="protect: nginx + auth_request + ratelimitd embedded + API, 10k keys"
row_limit_req="protect: nginx limit_req + API, 10k keys"

# --- measuring -----------------------------------------------------------------------------

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
# The same summed over a list of processes ("pid pid ..."): the protect rows count every process
# a proxied request passes.
ticks_all() { local t=0 p; for p in $1; do t=$((t + $(ticks_of "$p"))); done; echo "$t"; }
hz=$(getconf CLK_TCK)
us_per() { awk -v t="$1" -v hz="$hz" -v n="$2" 'BEGIN{ if (n > 0) printf "%.1f", t / hz * 1e6 / n; else print "-" }'; }

redis_stat() { redis-cli -p "$redis_port" INFO stats | tr -d '\r' | sed -n "s/^$1://p"; }
# One counter of a ratelimitd's /metrics (empty when it has none, e.g. an older --baseline build).
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m { printf "%.0f", $2 }'; }
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }

results=$work/results.tsv   # round, row, req/s, server µs/req, redis µs/req, p99 ms, no-key share, checks per write
: >"$results"

# A row starts from an empty Redis (the same cold start for every row on Redis) and snapshots
# the counters end_row reads again.
begin_row() {  # server pid, or "" for a row with no server of its own
  redis-cli -p "$redis_port" FLUSHALL >/dev/null
  row_server0=0
  [ -n "$1" ] && row_server0=$(ticks_all "$1")
  row_redis0=$(ticks_of "$redis_pid")
  row_misses0=$(redis_stat keyspace_misses)
  row_hits0=$(redis_stat keyspace_hits)
}

# Appends the row's figures to $results. redis: "no" (the row does not use Redis), "cpu" (its
# CPU per request), "keys" (that and the share of checks that found no key).
end_row() {  # round, name, server pid or "", redis, requests, seconds, p99 ms, checks per write
  local round=$1 name=$2 pid=$3 redis=$4 req=$5 sec=$6 p99=$7 batch=$8 server="-" redis_us="-" nokey="-" misses hits
  [ -n "$pid" ] && server=$(us_per $(($(ticks_all "$pid") - row_server0)) "$req")
  if [ "$redis" != no ]; then redis_us=$(us_per $(($(ticks_of "$redis_pid") - row_redis0)) "$req"); fi
  if [ "$redis" = keys ]; then
    misses=$(($(redis_stat keyspace_misses) - row_misses0)); hits=$(($(redis_stat keyspace_hits) - row_hits0))
    nokey=$(awk -v m="$misses" -v n="$req" 'BEGIN{ printf "%.3f", (n > 0 ? m / n : 0) }')
    # The check on the method: a check that found its key reads it twice with the frozen script
    # (TYPE, HMGET), so this is 2.0 when every miss was a check that found no key.
    echo "  ($name: $(awk -v h="$hits" -v m="$misses" -v n="$req" 'BEGIN{ printf "%.2f", (n > m ? h / (n - m) : 0) }') key reads per check that found its key)" >&2
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$name" "$(awk -v r="$req" -v s="$sec" 'BEGIN{printf "%.0f", r/s}')" \
    "$server" "$redis_us" "$p99" "$nokey" "$batch" >>"$results"
  echo "  round $round, $name: $(cut -f3 <<<"$(tail -1 "$results")") req/s, server $server µs/req, redis $redis_us µs/req, no key $nokey" >&2
}

# A figure of one row in one round ("-" when not measured).
figure() {  # round, row, column
  awk -F'\t' -v r="$1" -v n="$2" -v c="$3" '$1 == r && $2 == n { v = $c } END { print (v == "" ? "-" : v) }' "$results"
}

# --- rows ----------------------------------------------------------------------------------

# An HTTP row: wrk, 32 keep-alive connections, against one server. With a metrics port (a
# ratelimitd on Redis) the mean checks per script call (its batch) is read from /metrics.
row_wrk() {  # round, name, url, wrk script, tenants, server pid, redis (no|cpu|keys), [metrics port]
  local round=$1 name=$2 url=$3 script=$4 tenants=$5 pid=$6 redis=$7 mport=${8:-} calls0="" checks0="" out batch="-"
  begin_row "$pid"
  if [ -n "$mport" ]; then
    calls0=$(metric "$mport" ratelimitd_redis_check_calls_total)
    checks0=$(metric "$mport" ratelimitd_redis_coalesced_checks_total)
  fi
  TENANTS=$tenants BENCH_DIR=$root/bench wrk -t1 -c32 -d"${duration}s" -s "$script" "$url" >"$work/wrk.out"
  out=$(grep '^RESULT' "$work/wrk.out")
  if [ -n "$calls0" ] && [ -n "$checks0" ]; then
    batch=$(awk -v c=$(($(metric "$mport" ratelimitd_redis_coalesced_checks_total) - checks0)) \
                -v n=$(($(metric "$mport" ratelimitd_redis_check_calls_total) - calls0)) \
                'BEGIN{ if (n > 0) printf "%.1f", c / n; else print "-" }')
  fi
  end_row "$round" "$name" "$pid" "$redis" "$(field requests <<<"$out")" "$(field seconds <<<"$out")" \
    "$(field p99_ms <<<"$out")" "$batch"
}

# The same work as the Redis row of this round, without the sidecar: the frozen script by
# per-check EVALSHA over the same keys, at the rate and in the batches that row reached.
row_rate_matched() {  # round
  local round=$1 rate batch out req sec
  rate=$(figure "$round" "$row_redis" 3)
  batch=$(figure "$round" "$row_redis" 8)
  # The sidecar's mean batch, to whole commands; 16 (redis-benchmark's -P16) when its build
  # has no batching counters.
  batch=$(awk -v b="$batch" 'BEGIN{ if (b == "-") print 16; else { n = int(b + 0.5); print (n < 1 ? 1 : n) } }')
  begin_row ""
  python3 bench/evalsha_driver.py --port "$redis_port" --sha "$baseline_sha" --key "$key_template" \
    --argv "$script_argv" --rate "$rate" --seconds "$duration" --batch "$batch" --tenants 10000 >"$work/driver.out"
  out=$(grep '^RESULT' "$work/driver.out")
  req=$(field requests <<<"$out"); sec=$(field seconds <<<"$out")
  if awk -v r="$req" -v s="$sec" -v t="$rate" 'BEGIN{ exit !(r / s < 0.95 * t) }'; then
    echo "  round $round: the EVALSHA driver reached $(awk -v r="$req" -v s="$sec" 'BEGIN{printf "%.0f", r/s}') of $rate checks/s (Redis or the machine too busy): not rate-matched" >&2
  fi
  end_row "$round" "$row_matched" "" keys "$req" "$sec" "$(field p99_ms <<<"$out")" "$batch"
}

# The old baseline: redis-benchmark at full speed, 32 connections of 16 pipelined EVALSHA. It
# hits each key several times as often as the HTTP rows do: fewer checks find no key. Its keys
# are 10k too, named like the sidecar's but with the number zero-padded (__rand_int__).
row_full_speed() {  # round
  local n=$((duration * 40000)) csv
  begin_row ""
  csv=$(redis-benchmark -p "$redis_port" -c 32 -P 16 -n "$n" -r 10000 --csv \
          EVALSHA "$baseline_sha" 1 "${key_template/'{}'/t__rand_int__}" "${script_args[@]}" | tail -1 | tr -d '"')
  # CSV: test, rps, avg, min, p50, p95, p99, max; seconds from the count and the rate
  end_row "$1" "$row_p16" "" keys "$n" "$(awk -v n="$n" -v r="$(cut -d, -f2 <<<"$csv")" 'BEGIN{ printf "%.3f", n / r }')" \
    "$(cut -d, -f7 <<<"$csv")" 16
}

# --- servers -------------------------------------------------------------------------------
redis_port=$(pick_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!; pids+=("$redis_pid"); wait_port "$redis_port"

# The policy, and the same numbers as the frozen script's ARGV (limit, window_ms, burst, cost,
# member): 100 per 60 s, burst = limit, one token a check.
# The protect rows: /api/* limited per hashed X-Api-Key by a policy that never denies, so
# auth_request and limit_req both pass every request to the API.
cat >"$work/bench.yaml" <<'YAML'
hash_secret: "bench-hash-secret-0123456789abcdef"
policies:
  bench: { algorithm: token_bucket, limit: 100, window: 60s }
  api: { algorithm: token_bucket, limit: 100000000, window: 60s }
identity:
  - { header: X-Api-Key, hash: true }
routes:
  - { path: "/api/*", policy: api }
YAML
script_args=(100 60000 100 1 "")
script_argv=$(IFS=,; echo "${script_args[*]}")
baseline_sha=$(redis-cli -p "$redis_port" SCRIPT LOAD "$(cat bench/baseline_token_bucket.lua)")

launch() {  # name, binary, extra args... -> sets LAUNCH_PORT, LAUNCH_PID
  local name=$1 binary=$2; shift 2
  "$binary" --config "$work/bench.yaml" --listen 127.0.0.1:0 --threads "$threads" "$@" >"$work/$name.log" 2>&1 &
  LAUNCH_PID=$!; pids+=("$LAUNCH_PID")
  for _ in $(seq 1 200); do grep -q "listening on" "$work/$name.log" 2>/dev/null && break; sleep 0.05; done
  LAUNCH_PORT=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/$name.log" | sed 's/.*://')
}
check() {  # port, tenant
  curl -s -o /dev/null -X POST "http://127.0.0.1:$1/v1/check" -H 'Content-Type: application/json' \
    -d "{\"policy\":\"bench\",\"tenant\":\"$2\"}"
}
launch embedded "$bin"; em_port=$LAUNCH_PORT; em_pid=$LAUNCH_PID
launch redis-store "$bin" --redis "redis://127.0.0.1:$redis_port"; rs_port=$LAUNCH_PORT; rs_pid=$LAUNCH_PID
if [ -n "$baseline" ]; then
  launch base-embedded "$baseline"; bem_port=$LAUNCH_PORT; bem_pid=$LAUNCH_PID
  launch base-redis-store "$baseline" --redis "redis://127.0.0.1:$redis_port"; brs_port=$LAUNCH_PORT; brs_pid=$LAUNCH_PID
fi

# The key a check of tenant T writes, as the sidecar names it: one probe check, and the one key
# it left, with the tenant replaced by {} (the driver puts t<i> there, as bench/check.lua does).
key_template=""
if [ "$embedded_only" = 0 ]; then
  redis-cli -p "$redis_port" FLUSHALL >/dev/null
  check "$rs_port" keyprobe
  probe_key=$(redis-cli -p "$redis_port" --scan --pattern '*keyprobe*')
  if [ "$(wc -w <<<"$probe_key")" != 1 ]; then
    echo "the probe check left keys '$probe_key', not one: cannot match the sidecar's keys" >&2; exit 1
  fi
  key_template=${probe_key/keyprobe/'{}'}
  echo "sidecar key layout: $key_template" >&2
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

# What protecting an API costs: nginx in front of an API (an nginx `return 200`), asking the
# embedded ratelimitd with the shipped config/nginx/ratelimitd.conf, against nginx's own
# limit_req keyed by the same header, in front of the same API. CPU of every process.
start_nginx() {  # name, port, http {} body -> sets NGINX_PID
  mkdir -p "$work/$1"
  printf 'worker_processes 1;\nevents { worker_connections 1024; }\nhttp {\n  access_log off; server_tokens off;\n%s\n}\n' "$3" >"$work/$1/nginx.conf"
  nginx -p "$work/$1" -c "$work/$1/nginx.conf" -g "daemon off; pid $work/$1/nginx.pid; error_log stderr;" 2>"$work/$1.log" &
  NGINX_PID=$!; pids+=("$NGINX_PID"); wait_port "$2"
}
api_port=$(pick_port)
start_nginx api "$api_port" "  server { listen 127.0.0.1:$api_port; keepalive_requests 1000000;
    location / { default_type text/plain; return 200 'ok'; } }"
api_pid=$NGINX_PID
front_port=$(pick_port)
# shellcheck disable=SC2016 # envsubst's list of the variables to fill, unexpanded on purpose
front_conf=$(LISTEN=127.0.0.1:$front_port RATELIMITD_ADDR=127.0.0.1:$em_port UPSTREAM_ADDR=127.0.0.1:$api_port \
  RATELIMITD_DOWN=closed envsubst '${LISTEN} ${RATELIMITD_ADDR} ${UPSTREAM_ADDR} ${RATELIMITD_DOWN}' <config/nginx/ratelimitd.conf)
start_nginx front "$front_port" "$front_conf"
front_pid=$NGINX_PID
lr_port=$(pick_port)
start_nginx limit_req "$lr_port" "  limit_req_zone \$http_x_api_key zone=api:10m rate=100000r/s;
  upstream protected_api { server 127.0.0.1:$api_port; keepalive 32; }
  server { listen 127.0.0.1:$lr_port; keepalive_requests 1000000;
    location / { limit_req zone=api burst=1000 nodelay; proxy_http_version 1.1;
      proxy_set_header Connection \"\"; proxy_pass http://protected_api; } }"
lr_pid=$NGINX_PID

# Node is installed and started once, before the rounds, so it is in every round or in none.
node_pid=""
if [ "$node" = 1 ] && command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1 &&
   (cd "$work" && npm install --silent --no-audit --no-fund rate-limiter-flexible ioredis >/dev/null 2>&1); then
  node_port=$(pick_port)
  NODE_PATH=$work/node_modules REDIS_PORT=$redis_port PORT=$node_port node bench/node_peer.js >"$work/node.log" 2>&1 &
  node_pid=$!; pids+=("$node_pid"); wait_port "$node_port"
else
  echo "  Node peer skipped (--no-node, or npm could not install it)" >&2
fi

# --- rounds --------------------------------------------------------------------------------
one_round() {  # round
  local r=$1 url=/v1/check
  row_wrk "$r" "$row_204" "http://127.0.0.1:$nginx_port/empty" bench/plain.lua 1 "$nginx_pid" no
  row_wrk "$r" "$row_same" "http://127.0.0.1:$nginx_port$url" bench/check.lua 10000 "$nginx_pid" no
  row_wrk "$r" "$row_em" "http://127.0.0.1:$em_port$url" bench/check.lua 10000 "$em_pid" no
  row_wrk "$r" "$row_protect" "http://127.0.0.1:$front_port/api/orders" bench/auth.lua 10000 "$front_pid $em_pid $api_pid" no
  row_wrk "$r" "$row_limit_req" "http://127.0.0.1:$lr_port/api/orders" bench/auth.lua 10000 "$lr_pid $api_pid" no
  row_wrk "$r" "$row_hot" "http://127.0.0.1:$em_port$url" bench/check.lua 1 "$em_pid" no
  if [ "$embedded_only" = 0 ]; then
    row_wrk "$r" "$row_redis" "http://127.0.0.1:$rs_port$url" bench/check.lua 10000 "$rs_pid" keys "$rs_port"
    row_rate_matched "$r"
    row_full_speed "$r"
  fi
  if [ -n "$baseline" ]; then
    row_wrk "$r" "$row_base_em" "http://127.0.0.1:$bem_port$url" bench/check.lua 10000 "$bem_pid" no
    row_wrk "$r" "$row_base_hot" "http://127.0.0.1:$bem_port$url" bench/check.lua 1 "$bem_pid" no
    if [ "$embedded_only" = 0 ]; then
      row_wrk "$r" "$row_base_redis" "http://127.0.0.1:$brs_port$url" bench/check.lua 10000 "$brs_pid" keys "$brs_port"
    fi
  fi
  if [ -n "$node_pid" ]; then
    row_wrk "$r" "$row_node" "http://127.0.0.1:$node_port$url" bench/check.lua 10000 "$node_pid" cpu
  fi
}

echo "measuring CPU per request (${duration}s per row, $rounds rounds interleaved, --threads $threads)..." >&2
for round in $(seq 1 "$rounds"); do one_round "$round"; done

# --- report --------------------------------------------------------------------------------

# The median of the numbers on stdin in a printf format, with " (min–max)" when a second
# argument is given; "-" when there are none.
stats() {  # format, [spread]
  sort -g | awk -v f="$1" -v spread="${2:-}" '{ v[NR] = $1 }
    END { if (NR == 0) { print "-"; exit }
          m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
          s = sprintf(f, m); if (spread != "") s = s sprintf(" (" f "–" f ")", v[1], v[NR]); print s }'
}
# One row's figure in every round where it was measured, one a line.
values() {  # row, column
  awk -F'\t' -v n="$1" -v c="$2" '$2 == n && $c != "-" { print $c }' "$results"
}
# A ÷ B within each round where both were measured, one a line.
ratios() {  # row A, column A, row B, column B
  awk -F'\t' -v a="$1" -v ca="$2" -v b="$3" -v cb="$4" '
    $2 == a && $ca != "-" { x[$1] = $ca }
    $2 == b && $cb != "-" { y[$1] = $cb }
    END { for (r in x) if ((r in y) && y[r] > 0) print x[r] / y[r] }' "$results"
}
goal() { ratios "$@" | stats "%.2f" spread; }
percent() { awk '{ printf "%.1f\n", $1 * 100 }'; }

section=$work/section.md
{
  echo "<!-- cpu.sh begin -->"
  echo "## CPU per request (bench/cpu.sh)"
  echo
  echo "Written by \`bench/cpu.sh --duration $duration --rounds $rounds --threads $threads\` on $(date -u +%Y-%m-%dT%H:%MZ)."
  if [ -n "$baseline" ]; then
    echo "\"baseline\" rows: the same rows in the same rounds, for the binary given with --baseline (${BASELINE_NOTE:-an older build})."
  fi
  echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), Linux $(uname -r)."
  echo "Rows interleaved: $rounds round(s), each running every row once in table order, ${duration} s per row;"
  echo "each figure is the median over the rounds, \"(a–b)\" its spread (min–max). HTTP rows: wrk -t1 -c32"
  echo "keep-alive. CPU: user + sys of the server process (all threads; nginx master + worker) and of"
  echo "redis-server, from /proc, over the row ÷ requests answered. \"Same bytes\": nginx answers the status"
  echo "line, header lines and body of a real ratelimitd check. Every row starts from an empty Redis."
  if [ "$embedded_only" = 0 ]; then
    echo "The rate-matched EVALSHA baseline runs bench/baseline_token_bucket.lua (frozen), one EVALSHA per"
    echo "check, on the sidecar's keys of the same 10k tenants, at the req/s the Redis row reached in the"
    echo "same round, pipelined in that row's mean batch (its /metrics: checks per script call)."
    echo "\"No key\": share of checks whose key was absent (new or expired), from redis keyspace_misses"
    echo "over the row ÷ checks (a token-bucket check reads an absent key once: TYPE). p99 of the"
    echo "EVALSHA rows: the driver's is a batch's round trip, redis-benchmark's a command's."
  fi
  echo
  echo "| row | req/s | server CPU µs/req | redis CPU µs/req | p99 ms | no key % | checks per Redis write | server CPU × nginx same bytes |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' '!seen[$2]++ { print $2 }' "$results" | while IFS= read -r name; do
    echo "| $name | $(values "$name" 3 | stats "%.0f") | $(values "$name" 4 | stats "%.1f" spread)" \
      "| $(values "$name" 5 | stats "%.1f" spread) | $(values "$name" 6 | stats "%.3f")" \
      "| $(values "$name" 7 | percent | stats "%.1f") | $(values "$name" 8 | stats "%.1f")" \
      "| $(ratios "$name" 4 "$row_same" 4 | stats "%.2f") |"
  done
  echo
  echo "| goal of the performance issue (per round, median (min–max) over $rounds) | wanted | this run |"
  echo "|---|---:|---:|"
  echo "| protect: auth_request ÷ nginx limit_req, CPU of every process per proxied request | ≤ 1.8 | $(goal "$row_protect" 4 "$row_limit_req" 4) |"
  echo "| embedded check ÷ nginx same bytes, CPU µs/req | ≤ 1.12 | $(goal "$row_em" 4 "$row_same" 4) |"
  if [ -n "$baseline" ]; then
    echo "| the same, baseline binary | – | $(goal "$row_base_em" 4 "$row_same" 4) |"
  fi
  echo "| Redis check, sidecar CPU ÷ nginx same bytes | ≤ 1.6 | $(goal "$row_redis" 4 "$row_same" 4) |"
  echo "| redis-server CPU per check ÷ the rate-matched EVALSHA baseline's | ≤ 0.8 | $(goal "$row_redis" 5 "$row_matched" 5) |"
  echo "| the same ÷ EVALSHA -P16 at full speed (not the same work: for reference) | – | $(goal "$row_redis" 5 "$row_p16" 5) |"
  echo "| Node peer CPU ÷ sidecar CPU per check | ≥ 3.5 | $(goal "$row_node" 4 "$row_redis" 4) |"
  echo "| sidecar req/s ÷ Node peer req/s | ≥ 2 | $(goal "$row_redis" 3 "$row_node" 3) |"
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
