#!/usr/bin/env bash
# Quota webhooks never on the check's path: the checks' p99 and CPU per check with the receiver
# up, down (connection refused), and black-holed (accepts, never answers: every attempt waits
# its timeout), against the same policy without thresholds ("none"). Checks cross thresholds
# all the time: limit 10 per 2 s over 1000 tenants (TENANTS=N to change), at [0.5, 0.8, 1.0],
# so at a few thousand checks per second every tenant crosses all three in every window.
# One sidecar per row, all started at once; the rows take turns, round after round
# (none, up, down, black hole, none, up, ...), so that a shared machine's load swings reach every
# row alike; each figure is the median over the rounds. CPU: user + sys of each process (all
# its threads, /proc/<pid>/stat) over the row's run, divided by the checks answered.
#   bench/notify.sh [--duration SECONDS] [--rounds N] [--binary PATH]
# Prints one table, then the dead receiver's check p99 against "none" (medians, and the median of
# the per-round ratios); RESULTS.md is bench/run.sh's and is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
duration=10 rounds=5 bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --rounds|--runs) rounds=$2; shift 2 ;;
    --binary) bin=$2; shift 2 ;;
    *) echo "usage: bench/notify.sh [--duration SECONDS] [--rounds N] [--binary PATH]"; exit 2 ;;
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
    protocol_version = "HTTP/1.1"  # keeps connections open when the sender does
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(204); self.send_header("Content-Length", "0"); self.end_headers()
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
python3 "$work/receiver.py" ok "$ok_port" & ok_pid=$!; pids+=("$ok_pid"); wait_port "$ok_port"
hole_port=$(pick_port)
python3 "$work/receiver.py" hole "$hole_port" & hole_pid=$!; pids+=("$hole_pid"); wait_port "$hole_port"
down_port=$(pick_port)  # nothing listens there
redis_pid=${pids[0]}

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

launch() {  # name, config -> LAUNCH_PORT, LAUNCH_PID
  "$bin" --config "$2" --listen 127.0.0.1:0 --threads 2 --redis "redis://127.0.0.1:$redis_port" >"$work/$1.log" 2>&1 &
  LAUNCH_PID=$!
  pids+=("$LAUNCH_PID")
  for _ in $(seq 1 200); do grep -q "listening on" "$work/$1.log" 2>/dev/null && break; sleep 0.05; done
  LAUNCH_PORT=$(grep -o 'listening on [0-9.]*:[0-9]*' "$work/$1.log" | sed 's/.*://')
}

# CPU ticks (user + sys, every thread) of one process.
ticks_of() { [ -n "$1" ] && sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}' || echo 0; }
hz=$(getconf CLK_TCK)
us_per() { awk -v t="$1" -v hz="$hz" -v n="$2" 'BEGIN{ if (n > 0) printf "%.1f", t / hz * 1e6 / n; else print "-" }'; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { sed -n "s/.*\"$1\":\([0-9.]*\).*/\1/p"; }
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v s="$2" '$1 == s {print $2}'; }

names=("none" "up" "down" "hole")
labels=("none (no notify section)" "up" "down (refused)" "black hole (1 s timeouts)")
receiver_ports=("" "$ok_port" "$down_port" "$hole_port")
receiver_pids=("" "$ok_pid" "" "$hole_pid")
ports=() sidecars=()
for i in 0 1 2 3; do
  write_config "$work/${names[$i]}.yaml" "${receiver_ports[$i]}"
  launch "${names[$i]}" "$work/${names[$i]}.yaml"
  ports+=("$LAUNCH_PORT") sidecars+=("$LAUNCH_PID")
  : >"$work/${names[$i]}.runs"
done

for _ in $(seq 1 "$rounds"); do
  for i in 0 1 2 3; do
    redis-cli -p "$redis_port" FLUSHALL >/dev/null
    s0=$(ticks_of "${sidecars[$i]}") r0=$(ticks_of "$redis_pid") h0=$(ticks_of "${receiver_pids[$i]}")
    TENANTS=${TENANTS:-1000} BENCH_DIR=$root/bench wrk -t1 -c32 -d"${duration}s" -s bench/check.lua \
      "http://127.0.0.1:${ports[$i]}" >"$work/wrk.out"
    s1=$(ticks_of "${sidecars[$i]}") r1=$(ticks_of "$redis_pid") h1=$(ticks_of "${receiver_pids[$i]}")
    out=$(grep '^RESULT' "$work/wrk.out")
    n=$(echo "$out" | field requests)
    echo "$(awk -v r="$n" -v s="$(echo "$out" | field seconds)" 'BEGIN{printf "%.0f", r/s}') \
$(echo "$out" | field p50_ms) $(echo "$out" | field p99_ms) $(echo "$out" | field p999_ms) \
$(us_per $((s1 - s0)) "$n") $(us_per $((r1 - r0)) "$n") $(us_per $((h1 - h0)) "$n")" >>"$work/${names[$i]}.runs"
  done
done

col() { cut -d' ' -f"$2" "$work/$1.runs" | grep -v '^-$' | median; }
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores;" \
  "$rounds rounds of ${duration} s per row."
printf '| receiver | req/s | p50 ms | p99 ms | p99.9 ms | sidecar CPU µs/check | redis µs/check '
printf '| receiver µs/check | events sent | failed | dropped |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for i in 0 1 2 3; do
  name=${names[$i]} port=${ports[$i]}
  sent=$(metric "$port" 'ratelimitd_notify_sent_total{target="ops"}')
  failed=$(metric "$port" 'ratelimitd_notify_failed_total{target="ops"}')
  dropped=$(metric "$port" 'ratelimitd_notify_dropped_total')
  receiver_cpu=$(col "$name" 7); [ -z "${receiver_pids[$i]}" ] && receiver_cpu="-"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${labels[$i]}" "$(col "$name" 1)" \
    "$(col "$name" 2)" "$(col "$name" 3)" "$(col "$name" 4)" "$(col "$name" 5)" "$(col "$name" 6)" "$receiver_cpu" \
    "${sent:-0}" "${failed:-0}" "${dropped:-0}"
done

# The dead receiver's cost, round by round: each round's "down" p99 over the "none" p99 of the
# same round (the rows ran back to back, so a load swing of the machine reaches both alike).
paste -d' ' "$work/none.runs" "$work/down.runs" | awk '{ if ($3 > 0) print $10 / $3 }' | median >"$work/ratio"
echo
echo "Dead receiver (connection refused) vs no notify section, check p99: $(col down 3) ms vs $(col none 3) ms" \
  "(medians); per-round ratio down/none, median over $rounds rounds: $(cat "$work/ratio")"
