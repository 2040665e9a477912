#!/usr/bin/env bash
# Quota webhooks never on the check's path: the checks' p99 with the receiver up, down
# (connection refused), and black-holed (accepts, never answers: every attempt waits its
# timeout), against the same policy without thresholds. Checks cross thresholds all the time:
# limit 10 per 2 s over 1000 tenants (TENANTS=N to change), at [0.5, 0.8, 1.0], so at a few
# thousand checks per second every tenant crosses all three in every window.
#   bench/notify.sh [--duration SECONDS] [--runs N] [--binary PATH]
# Prints one table (median of N runs); RESULTS.md is bench/run.sh's and is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
duration=10 runs=3 bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --binary) bin=$2; shift 2 ;;
    *) echo "usage: bench/notify.sh [--duration SECONDS] [--runs N] [--binary PATH]"; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
  cmake --build build-release -j2 --target ratelimitd >/dev/null
  bin=$root/build-release/ratelimitd
fi

. bench/lib.sh

redis_port=$(pick_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=("$!"); wait_port "$redis_port"

# The receivers: one answers 204 at once; one accepts and never answers (a black hole).
cat >"$work/receiver.py" <<'PY'
import socket, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Ok(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(204); self.end_headers()
    def log_message(self, *args): pass
if sys.argv[1] == "ok":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Ok).serve_forever()
else:
    held = []
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(sys.argv[2]))); s.listen(1024)
    while True:
        c, _ = s.accept(); held.append(c)
PY
ok_port=$(pick_port)
python3 "$work/receiver.py" ok "$ok_port" & pids+=("$!"); wait_port "$ok_port"
hole_port=$(pick_port)
python3 "$work/receiver.py" hole "$hole_port" & pids+=("$!"); wait_port "$hole_port"
down_port=$(pick_port)  # nothing listens there

write_config() {  # file, receiver port ("" for no notify section)
  cat >"$1" <<YAML
policies:
  bench: { algorithm: fixed_window, limit: 10, window: 2s }
YAML
  [ -z "$2" ] && return
  cat >>"$1" <<YAML
notify:
  targets:
    ops: { url: "http://127.0.0.1:$2/hook", secret: "bench-secret-0123456789", timeout: 1s }
  policies:
    bench: { at: [0.5, 0.8, 1.0], target: ops }
YAML
}

launch() {  # name, config -> LAUNCH_PORT
  "$bin" --config "$2" --listen 127.0.0.1:0 --threads 2 --redis "redis://127.0.0.1:$redis_port" >"$work/$1.log" 2>&1 &
  pids+=("$!")
  for _ in $(seq 1 200); do grep -q "listening on" "$work/$1.log" 2>/dev/null && break; sleep 0.05; done
  LAUNCH_PORT=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/$1.log" | sed 's/.*://')
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v s="$2" '$1 == s {print $2}'; }

printf '| receiver | req/s | p50 ms | p99 ms | p99.9 ms | events sent | failed | dropped |\n|---|---:|---:|---:|---:|---:|---:|---:|\n'
for row in "none (no notify section):" "up:$ok_port" "down (refused):$down_port" "black hole (1 s timeouts):$hole_port"; do
  name=${row%%:*} port=${row##*:}
  write_config "$work/$name.yaml" "$port"
  launch "$name" "$work/$name.yaml"
  : >"$work/runs"
  for _ in $(seq 1 "$runs"); do
    redis-cli -p "$redis_port" FLUSHALL >/dev/null
    TENANTS=${TENANTS:-1000} BENCH_DIR=$root/bench wrk -t1 -c32 -d"${duration}s" -s bench/check.lua \
      "http://127.0.0.1:$LAUNCH_PORT" >"$work/wrk.out"
    out=$(grep '^RESULT' "$work/wrk.out")
    echo "$(awk -v r="$(echo "$out" | field requests)" -v s="$(echo "$out" | field seconds)" 'BEGIN{printf "%.0f", r/s}') \
$(echo "$out" | field p50_ms) $(echo "$out" | field p99_ms) $(echo "$out" | field p999_ms)" >>"$work/runs"
  done
  sent=$(metric "$LAUNCH_PORT" 'ratelimitd_notify_sent_total{target="ops"}')
  failed=$(metric "$LAUNCH_PORT" 'ratelimitd_notify_failed_total{target="ops"}')
  dropped=$(metric "$LAUNCH_PORT" 'ratelimitd_notify_dropped_total')
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$(cut -d' ' -f1 "$work/runs" | median)" \
    "$(cut -d' ' -f2 "$work/runs" | median)" "$(cut -d' ' -f3 "$work/runs" | median)" \
    "$(cut -d' ' -f4 "$work/runs" | median)" "${sent:-0}" "${failed:-0}" "${dropped:-0}"
done
