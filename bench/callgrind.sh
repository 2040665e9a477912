#!/usr/bin/env bash
# User-space instructions and heap allocations per request, by callgrind: figures that a busy
# neighbour does not move (the machine's load changes times, not the instructions a request
# runs). Each server runs under `valgrind --tool=callgrind`; after a warm-up its counts are
# zeroed (callgrind_control -z), wrk runs, its counts are dumped (callgrind_control -d), and
# bench/callgrind_counts.py sums the instructions (Ir, every thread) and the calls into the
# C allocator; ÷ the requests wrk had answered. The kernel's part is not in these: see
# bench/cpu.sh for CPU time, user + sys.
#
# Rows (wrk -t1 -c32 keep-alive, --timeout 60s: valgrind is slow, 10k tenants or API keys):
#   nginx same bytes       nginx answering a real check's status line, headers and body
#   embedded /v1/check     ratelimitd, embedded store
#   Redis /v1/check        ratelimitd on a real redis-server (the sidecar's instructions only)
#   /v1/auth hashed        ratelimitd straight, GET /v1/auth with a hashed X-Api-Key
#   protect: auth_request  nginx running config/nginx/ratelimitd.conf (HEAD subrequests, kept
#                          connections) + ratelimitd embedded + the API (an nginx `return 200`):
#                          every process, per proxied request
#   protect: limit_req     nginx's own limit_req keyed by X-Api-Key + the same API
#
#   bench/callgrind.sh [--duration SECONDS] [--binary PATH] [--only TEXT]
# --only measures just the rows whose name holds TEXT (for a profile of one row: the report
# then lacks the others).
# Prints the table and writes it into bench/RESULTS.md between the `callgrind.sh` markers,
# beside the ratios of the last bench/cpu.sh section when the file has one.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
duration=10 bin="" only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --binary) bin=$(realpath "$2"); shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "usage: bench/callgrind.sh [--duration SECONDS] [--binary PATH] [--only TEXT]" >&2; exit 2 ;;
  esac
done
if ! command -v valgrind >/dev/null || ! command -v callgrind_control >/dev/null; then
  echo "valgrind is not installed" >&2; exit 1
fi
if [ -z "$bin" ]; then
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
  cmake --build build-release -j2 --target ratelimitd >/dev/null
  bin=$root/build-release/ratelimitd
fi
# shellcheck source-path=SCRIPTDIR/..
. bench/lib.sh

# Started straight (not through a shell function) so that $! is valgrind's own pid, the one
# callgrind_control addresses and the dump files are named by.
# Each callgrind_control -d of a process writes its next dump (<out>.1, .2, ...): a process in
# several rows (the embedded ratelimitd, the API) is read from its newest.
last_dump() { find "$work" -name "cg.*.$1.[0-9]*" | sort -V | tail -1; }
procname() { find "$work" -name "cg.*.$1" | sed 's/.*cg\.\([^.]*\)\..*/\1/'; }
out_of() { echo "--callgrind-out-file=$work/cg.$1.%p"; }

# ratelimitd under callgrind; sets LAUNCH_PORT, LAUNCH_PID. Valgrind starts slowly: 60 s allowed.
launch_rl() {  # name, args...
  local name=$1; shift
  valgrind --tool=callgrind "$(out_of "$name")" "$bin" --config "$work/bench.yaml" --listen 127.0.0.1:0 --threads 1 "$@" >"$work/$name.log" 2>&1 &
  LAUNCH_PID=$!; pids+=("$LAUNCH_PID")
  for _ in $(seq 1 600); do grep -q "listening on" "$work/$name.log" 2>/dev/null && break; sleep 0.1; done
  LAUNCH_PORT=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/$name.log" | sed 's/.*://')
  [ -n "$LAUNCH_PORT" ] || { cat "$work/$name.log" >&2; exit 1; }
}
# nginx under callgrind, one process (no master), the config's body given; sets LAUNCH_PID.
launch_nginx() {  # name, port, http {} body
  mkdir -p "$work/$1"
  printf 'events { worker_connections 1024; }\nhttp {\n  access_log off; server_tokens off;\n%s\n}\n' "$3" >"$work/$1/nginx.conf"
  valgrind --tool=callgrind "$(out_of "$1")" nginx -p "$work/$1" -c "$work/$1/nginx.conf" \
    -g "daemon off; master_process off; pid $work/$1/nginx.pid; error_log stderr;" 2>"$work/$1.log" &
  LAUNCH_PID=$!; pids+=("$LAUNCH_PID")
  for _ in $(seq 1 600); do port_in_use "$2" && return 0; sleep 0.1; done
  cat "$work/$1.log" >&2; exit 1
}

# One row: warm up, zero the counts of every listed process, load, dump, sum. Appends
# "name<TAB>instructions<TAB>allocations<TAB>requests" to $results.
results=$work/results.tsv; : >"$results"
measure() {  # name, url, wrk script, "pid pid...", [env assignments...]
  local name=$1 url=$2 script=$3 procs=$4 p out req ir=0 al=0 c parts=""; shift 4
  [[ "$name" == *$only* ]] || return 0
  env "$@" TENANTS=10000 BENCH_DIR="$root/bench" wrk -t1 -c32 -d2s --timeout 60s -s "$script" "$url" >/dev/null
  for p in $procs; do callgrind_control -z "$p" >/dev/null; done
  out=$(env "$@" TENANTS=10000 BENCH_DIR="$root/bench" wrk -t1 -c32 -d"${duration}s" --timeout 60s -s "$script" "$url" | grep '^RESULT')
  for p in $procs; do callgrind_control -d "$p" >/dev/null; done
  req=$(sed -n 's/.*"requests":\([0-9]*\).*/\1/p' <<<"$out")
  # A request wrk gave up on closes its connection, and nginx then drops its upstream ones:
  # every figure after would count connects. Hence the long --timeout, and this warning.
  grep -q '"errors":0,"non2xx":0' <<<"$out" || echo "  $name: errors or answers other than 2xx: $out" >&2
  for p in $procs; do
    c=$(python3 bench/callgrind_counts.py "$(last_dump "$p")")
    c=${c#instructions=}
    ir=$((ir + ${c%% *}))
    al=$((al + ${c##*allocations=}))
    parts="$parts $(python3 bench/callgrind_counts.py "$(last_dump "$p")" --per "$req" | sed "s/^/$(procname "$p"):/")"
  done
  printf '%s\t%s\t%s\t%s\n' "$name" "$ir" "$al" "$req" >>"$results"
  echo "  $name: per process:$parts" >&2
  echo "  $name: $req requests, $((ir / req)) instructions and $(awk -v a="$al" -v n="$req" 'BEGIN{printf "%.2f", a/n}') allocations per request" >&2
}

# --- the servers ---------------------------------------------------------------------------
redis_port=$(pick_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=("$!"); wait_port "$redis_port"
# bench: cpu.sh's policy (100 per 60 s, most of 10k tenants allowed). api: never limits, so
# the protect rows compare the same allowed path. The API key is hashed.
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

echo "starting the servers under callgrind..." >&2
launch_rl embedded; em_port=$LAUNCH_PORT; em_pid=$LAUNCH_PID
launch_rl redis --redis "redis://127.0.0.1:$redis_port"; rs_port=$LAUNCH_PORT; rs_pid=$LAUNCH_PID

# The bytes of one allowed check, for nginx to answer the same (as bench/cpu.sh does).
curl -s -D "$work/check.headers" -o "$work/check.body" -X POST "http://127.0.0.1:$em_port/v1/check" \
  -H 'Content-Type: application/json' -d '{"policy":"bench","tenant":"shape"}'
add_headers=$(tr -d '\r' <"$work/check.headers" | grep -v -i -E '^(HTTP/|content-length|content-type|connection|date|server|keep-alive)' \
  | sed -n 's/^\([^:]*\): \(.*\)$/add_header \1 '"'"'\2'"'"';/p')
content_type=$(tr -d '\r' <"$work/check.headers" | sed -n 's/^[Cc]ontent-[Tt]ype: //p')
same_port=$(pick_port)
launch_nginx same "$same_port" "  server { listen 127.0.0.1:$same_port;
    location = /v1/check { default_type \"$content_type\"; $add_headers return 200 '$(cat "$work/check.body")'; } }"
same_pid=$LAUNCH_PID

api_port=$(pick_port)
launch_nginx api "$api_port" "  server { listen 127.0.0.1:$api_port; keepalive_requests 1000000;
    location / { default_type text/plain; return 200 'ok'; } }"
api_pid=$LAUNCH_PID
front_port=$(pick_port)
# shellcheck disable=SC2016 # envsubst's list of the variables to fill, unexpanded on purpose
front_conf=$(LISTEN=127.0.0.1:$front_port RATELIMITD_ADDR=127.0.0.1:$em_port UPSTREAM_ADDR=127.0.0.1:$api_port \
  RATELIMITD_DOWN=closed envsubst '${LISTEN} ${RATELIMITD_ADDR} ${UPSTREAM_ADDR} ${RATELIMITD_DOWN}' <config/nginx/ratelimitd.conf)
launch_nginx front "$front_port" "$front_conf"
front_pid=$LAUNCH_PID
lr_port=$(pick_port)
launch_nginx limit_req "$lr_port" "  limit_req_zone \$http_x_api_key zone=api:10m rate=100000r/s;
  upstream protected_api { server 127.0.0.1:$api_port; keepalive 32; }
  server { listen 127.0.0.1:$lr_port;
    location / { limit_req zone=api burst=1000 nodelay; proxy_http_version 1.1;
      proxy_set_header Connection \"\"; proxy_pass http://protected_api; } }"
lr_pid=$LAUNCH_PID

# --- the rows ------------------------------------------------------------------------------
row_same="nginx same bytes as a check"
row_em="ratelimitd embedded, POST /v1/check"
row_redis="ratelimitd on Redis, POST /v1/check (sidecar only)"
row_auth="ratelimitd embedded, GET /v1/auth, hashed X-Api-Key"
row_protect="protect: nginx + auth_request + ratelimitd embedded + API"
row_limit_req="protect: nginx limit_req + API"
echo "measuring (${duration}s per row)..." >&2
measure "$row_same" "http://127.0.0.1:$same_port/v1/check" bench/check.lua "$same_pid"
measure "$row_em" "http://127.0.0.1:$em_port/v1/check" bench/check.lua "$em_pid"
measure "$row_redis" "http://127.0.0.1:$rs_port/v1/check" bench/check.lua "$rs_pid"
measure "$row_auth" "http://127.0.0.1:$em_port/v1/auth" bench/auth.lua "$em_pid" ORIGINAL_URI=/api/orders
# nginx should keep its connections to ratelimitd (HEAD subrequests, keepalive 32): counted
# from ratelimitd's own counter over the row, warm-up included.
accepted() { curl -s "http://127.0.0.1:$em_port/metrics" | awk '$1 == "ratelimitd_connections_accepted_total" { printf "%.0f", $2 }'; }
accepted0=$(accepted)
measure "$row_protect" "http://127.0.0.1:$front_port/api/orders" bench/auth.lua "$front_pid $em_pid $api_pid"
protect_connects=$(($(accepted) - accepted0))
echo "  $row_protect: ratelimitd accepted $protect_connects connections over the row" >&2
measure "$row_limit_req" "http://127.0.0.1:$lr_port/api/orders" bench/auth.lua "$lr_pid $api_pid"

# --- the report ----------------------------------------------------------------------------
per() { awk -F'\t' -v n="$1" -v c="$2" -v f="$3" '$1 == n { printf f, $c / $4 }' "$results"; }
ratio() { awk -F'\t' -v a="$1" -v b="$2" '$1 == a { x = $2 / $4 } $1 == b { y = $2 / $4 } END { if (x > 0 && y > 0) printf "%.2f", x / y; else print "-" }' "$results"; }
# A goal ratio of the last cpu.sh run, from its section of RESULTS.md ("-" when absent).
cpu_goal() { sed -n "/<!-- cpu.sh begin -->/,/<!-- cpu.sh end -->/p" bench/RESULTS.md 2>/dev/null |
               awk -F'|' -v g="$1" 'index($2, g) { gsub(/^ +| +$/, "", $4); v = $4 } END { print (v == "" ? "-" : v) }'; }
section=$work/section.md
row_line() { echo "| $1 | $(awk -F'\t' -v n="$1" '$1 == n { print $4 }' "$results") | $(per "$1" 2 "%.0f") | $(per "$1" 3 "%.2f") | $(ratio "$1" "$2") |"; }
{
  echo "<!-- callgrind.sh begin -->"
  echo "## What protecting an API costs, and instructions per check (bench/callgrind.sh)"
  echo
  echo "Written by \`bench/callgrind.sh --duration $duration\` on $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null || echo '?')."
  echo "Each server under callgrind, wrk -t1 -c32 keep-alive, 10k tenants or API keys; counts zeroed after a"
  echo "2 s warm-up. User-space instructions (every thread) and calls into the C allocator, ÷ requests"
  echo "answered; the kernel's part is not in them (CPU time, user + sys: bench/cpu.sh, its section below)."
  echo "The protect rows count every process a proxied request passes (front nginx, ratelimitd, the API:"
  echo "an nginx \`return 200\`); ratelimitd's policy there never limits, so both rows are allows."
  echo
  echo "| per proxied request | requests | instructions | allocations | × nginx limit_req |"
  echo "|---|---:|---:|---:|---:|"
  row_line "$row_protect" "$row_limit_req"
  row_line "$row_limit_req" "$row_limit_req"
  echo
  echo "Connections ratelimitd accepted over the auth_request row (warm-up included): $protect_connects."
  echo
  echo "| per check | requests | instructions | allocations | × nginx same bytes |"
  echo "|---|---:|---:|---:|---:|"
  for name in "$row_same" "$row_em" "$row_redis" "$row_auth"; do row_line "$name" "$row_same"; done
  echo
  echo "| ratio | instructions (this run) | CPU µs (last bench/cpu.sh run, median (min–max) of its rounds) |"
  echo "|---|---:|---:|"
  echo "| protect: auth_request ÷ limit_req, per proxied request | $(ratio "$row_protect" "$row_limit_req") | $(cpu_goal "auth_request ÷ nginx limit_req") |"
  echo "| embedded check ÷ nginx same bytes | $(ratio "$row_em" "$row_same") | $(cpu_goal "embedded check ÷ nginx same bytes") |"
  echo "| Redis check (sidecar) ÷ nginx same bytes | $(ratio "$row_redis" "$row_same") | $(cpu_goal "Redis check, sidecar CPU ÷ nginx same bytes") |"
  echo "<!-- callgrind.sh end -->"
} >"$section"

report=$root/bench/RESULTS.md
if [ -f "$report" ] && grep -q '<!-- callgrind.sh begin -->' "$report"; then
  awk -v s="$section" '/<!-- callgrind.sh begin -->/{while ((getline l < s) > 0) print l; skip=1; next}
                       /<!-- callgrind.sh end -->/{skip=0; next} !skip' "$report" >"$work/report.new"
else
  # First in the file, after its title: the protection-cost table is what a user compares.
  { [ -f "$report" ] && head -2 "$report"; cat "$section"; echo; [ -f "$report" ] && tail -n +3 "$report"; } >"$work/report.new"
fi
mv "$work/report.new" "$report"
cat "$section"
