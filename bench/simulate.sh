#!/usr/bin/env bash
# Throughput of `ratelimitd simulate` (docs/simulate.md): a generated nginx combined log of
# LINES lines (default 5,000,000: up to 100,000 clients over two hours, a handful of policies)
# replayed on one core (taskset); prints lines per second of wall and of CPU time, the median of
# RUNS. Give --binary more than once to compare builds run by run (old and new, interleaved).
#   bench/simulate.sh [--lines N] [--runs N] [--binary PATH]...
# The goal (issue 37): at least 500,000 lines/s. Not a test: nothing here runs in the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
lines=5000000 runs=3 bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --lines) lines=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --binary) bins+=("$2"); shift 2 ;;
    *) echo "usage: bench/simulate.sh [--lines N] [--runs N] [--binary PATH]..."; exit 2 ;;
  esac
done
if [ ${#bins[@]} -eq 0 ]; then
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
  cmake --build build-release -j2 --target ratelimitd >/dev/null
  bins=("$root/build-release/ratelimitd")
fi
work=$(mktemp -d /tmp/simulate-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/config.yaml" <<'YAML'
policies:
  api: { algorithm: token_bucket, limit: 120, window: 1m }
  login: { algorithm: fixed_window, limit: 5, window: 1m }
  search: { algorithm: gcra, limit: 60, window: 1m, burst: 10 }
  exports: { algorithm: sliding_log, limit: 10, window: 1h }
  uploads: { algorithm: sliding_window, limit: 30, window: 1m }
routes:
  - { method: POST, path: /v1/exports, policy: exports }
  - { path: /login, policy: login }
  - { path: /v1/search, policy: search }
  - { path: /v1/uploads, policy: uploads }
  - { path: /health, policy: none }
  - { path: "/v1/*", policy: api }
YAML

# Lines in time order, 100,000 client addresses, the paths weighted towards the API.
awk -v n="$lines" 'BEGIN {
  srand(37);
  split("GET /v1/orders|GET /v1/items?page=2|GET /v1/search?q=shoes|POST /login|POST /v1/uploads|POST /v1/exports|GET /health|GET /v1/profile", req, "|");
  split("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec", mon, " ");
  start = 1764576000;  # 2025-12-01T08:00:00Z
  span = 7200;
  for (i = 0; i < n; i++) {
    t = start + int(i * span / n);
    if (t != last) { stamp = strftime("%d/%b/%Y:%H:%M:%S +0000", t, 1); last = t }
    c = int(rand() * rand() * 100000);  # skewed: some clients far busier than others
    r = req[1 + int(rand() * 8)];
    printf "10.%d.%d.%d - - [%s] \"%s HTTP/1.1\" 200 %d \"-\" \"bench/1.0\"\n", int(c / 65536), int(c / 256) % 256, c % 256, stamp, r, 100 + int(rand() * 900);
  }
}' >"$work/access.log"
echo "log: $lines lines, $(du -h "$work/access.log" | cut -f1)"

# Wall time, and CPU time (user + sys) of the replay alone: on a shared machine the second is
# the one that says what one core does. With several --binary, the runs alternate between them
# (A B A B ...), so that each sees the same machine; each binary's median is printed.
for run in $(seq "$runs"); do
  for i in "${!bins[@]}"; do
    b=${bins[$i]}
    /usr/bin/time -f "%e %U %S" -o "$work/time" taskset -c 0 "$b" simulate --quiet --json \
      --config "$work/config.yaml" --log "$work/access.log" >"$work/out.$i.json"
    read -r wall user sys <"$work/time"
    rate=$(awk -v n="$lines" -v t="$wall" 'BEGIN { printf "%d", n / t }')
    cpu_rate=$(awk -v n="$lines" -v u="$user" -v s="$sys" 'BEGIN { printf "%d", n / (u + s) }')
    echo "run $run, $b: ${wall} s wall ($rate lines/s), ${user} s user + ${sys} s sys ($cpu_rate lines per CPU second)"
    echo "$rate" >>"$work/wall.$i"
    echo "$cpu_rate" >>"$work/cpu.$i"
  done
done
for i in "${!bins[@]}"; do
  if [ "$i" -gt 0 ] && ! cmp -s "$work/out.0.json" "$work/out.$i.json"; then
    echo "NOTE: ${bins[$i]} decided differently from ${bins[0]}"
  fi
  median() {
    sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'
  }
  echo "${bins[$i]}: median $(median "$work/wall.$i") lines/s wall, $(median "$work/cpu.$i") lines per CPU second;" \
    "CPU runs: $(tr '\n' ' ' <"$work/cpu.$i")"
done
cp "$work/out.0.json" "$work/out.json"
python3 - "$work/out.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print("requests", s["requests"], "unparsed", s["unparsed"])
for name, p in sorted(s["policies"].items()):
    print(f"  {name:8} checked {p['checked']:>9} denied {p['denied']:>9} tenants denied {p['tenants_denied']:>6}")
PY
echo "goal: 500000 lines per second on one core"
