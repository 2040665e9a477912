#!/usr/bin/env bash
# Throughput of `ratelimitd simulate` (docs/simulate.md) on two generated nginx combined logs,
# each replayed on one core (taskset), in lines per CPU second (user + sys: on a shared machine
# the figure that says what one core does) and of wall time:
#   few:  FEW lines (default 5,000,000) over two hours, up to 100,000 clients, skewed so that
#         some are far busier than others, five policies of five algorithms (issue 37);
#   many: MANY lines (default 1,000,000) at 200 lines/s (about 83 minutes), clients spread
#         uniformly over 4 x 256 x 256 addresses, so most are seen a few times and nearly every
#         line is a cold key; 10 % POST /login on a fixed window 5/min, the rest
#         GET /v1/items/N on a token bucket 600/min, identity client_ip (issue 56).
# Rounds are interleaved: each round runs every row with every binary in turn (A B A B ...), so
# that each sees the same machine. Per row and binary: the median and the spread (min-max).
# Both logs are generated with fixed seeds: the same lines on every run.
#   bench/simulate.sh [--few N] [--many N] [--runs N] [--rows few,many] [--keep DIR] [--binary PATH]...
# --keep DIR keeps each row's --json summary of each binary (DIR/ROW.I.json) for comparison.
# The goal (issues 37, 56): at least 500,000 lines/s on one core, on both rows. Not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
few=5000000 many=1000000 runs=3 rows=few,many keep="" bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --lines | --few) few=$2; shift 2 ;;
    --many) many=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rows) rows=$2; shift 2 ;;
    --keep) keep=$2; mkdir -p "$keep"; shift 2 ;;
    --binary) bins+=("$2"); shift 2 ;;
    *) echo "usage: bench/simulate.sh [--few N] [--many N] [--runs N] [--rows few,many] [--keep DIR] [--binary PATH]..."
       exit 2 ;;
  esac
done
if [ ${#bins[@]} -eq 0 ]; then
  cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DRATELIMITD_TESTS=OFF >/dev/null
  cmake --build build-release -j2 --target ratelimitd >/dev/null
  bins=("$root/build-release/ratelimitd")
fi
work=$(mktemp -d /tmp/simulate-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
IFS=, read -r -a row_list <<<"$rows"

cat >"$work/few.yaml" <<'YAML'
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

cat >"$work/many.yaml" <<'YAML'
policies:
  login: { algorithm: fixed_window, limit: 5, window: 1m }
  items: { algorithm: token_bucket, limit: 600, window: 1m }
routes:
  - { method: POST, path: /login, policy: login }
  - { path: "/v1/items/*", policy: items }
identity:
  - { client_ip: true }
YAML

# few: lines in time order, 100,000 client addresses, the paths weighted towards the API.
gen_few() {
  awk -v n="$1" 'BEGIN {
    srand(37);
    split("GET /v1/orders|GET /v1/items?page=2|GET /v1/search?q=shoes|POST /login|POST /v1/uploads|POST /v1/exports|GET /health|GET /v1/profile", req, "|");
    start = 1764576000;  # 2025-12-01T08:00:00Z
    span = 7200;
    for (i = 0; i < n; i++) {
      t = start + int(i * span / n);
      if (t != last) { stamp = strftime("%d/%b/%Y:%H:%M:%S +0000", t, 1); last = t }
      c = int(rand() * rand() * 100000);  # skewed: some clients far busier than others
      r = req[1 + int(rand() * 8)];
      printf "10.%d.%d.%d - - [%s] \"%s HTTP/1.1\" 200 %d \"-\" \"bench/1.0\"\n", int(c / 65536), int(c / 256) % 256, c % 256, stamp, r, 100 + int(rand() * 900);
    }
  }'
}

# many: 200 lines a second, each from one of 262,144 addresses drawn uniformly.
gen_many() {
  awk -v n="$1" 'BEGIN {
    srand(56);
    start = 1764576000;  # 2025-12-01T08:00:00Z
    for (i = 0; i < n; i++) {
      t = start + int(i / 200);
      if (t != last) { stamp = strftime("%d/%b/%Y:%H:%M:%S +0000", t, 1); last = t }
      c = int(rand() * 262144);
      if (rand() < 0.1) r = "POST /login"; else r = "GET /v1/items/" (1 + int(rand() * 100000));
      printf "10.%d.%d.%d - - [%s] \"%s HTTP/1.1\" 200 %d \"-\" \"bench/1.0\"\n", int(c / 65536), int(c / 256) % 256, c % 256, stamp, r, 100 + int(rand() * 900);
    }
  }'
}

declare -A count=([few]=$few [many]=$many)
for row in "${row_list[@]}"; do
  "gen_$row" "${count[$row]}" >"$work/$row.log"
  echo "$row log: ${count[$row]} lines, $(du -h "$work/$row.log" | cut -f1), md5 $(md5sum <"$work/$row.log" | cut -c1-12)"
done

for run in $(seq "$runs"); do
  for row in "${row_list[@]}"; do
    n=${count[$row]}
    for i in "${!bins[@]}"; do
      b=${bins[$i]}
      /usr/bin/time -f "%e %U %S %M" -o "$work/time" taskset -c 0 "$b" simulate --quiet --json \
        --config "$work/$row.yaml" --log "$work/$row.log" >"$work/$row.$i.json"
      read -r wall user sys rss_kb <"$work/time"
      rate=$(awk -v n="$n" -v t="$wall" 'BEGIN { printf "%d", n / t }')
      cpu_rate=$(awk -v n="$n" -v u="$user" -v s="$sys" 'BEGIN { printf "%d", n / (u + s) }')
      echo "run $run, $row, $b: ${wall} s wall ($rate lines/s), ${user} s user + ${sys} s sys" \
        "($cpu_rate lines per CPU second), peak RSS ${rss_kb} KiB"
      echo "$rate" >>"$work/$row.wall.$i"
      echo "$cpu_rate" >>"$work/$row.cpu.$i"
      echo "$rss_kb" >"$work/$row.rss.$i"
    done
  done
done

median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
spread() { sort -n "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }
echo
printf '%-5s %-44s %12s %16s %12s %10s\n' row binary "CPU median" "CPU spread" "wall median" "RSS KiB"
for row in "${row_list[@]}"; do
  for i in "${!bins[@]}"; do
    printf '%-5s %-44s %12s %16s %12s %10s\n' "$row" "$(printf '%s' "${bins[$i]}" | tail -c 44)" "$(median "$work/$row.cpu.$i")" \
      "$(spread "$work/$row.cpu.$i")" "$(median "$work/$row.wall.$i")" "$(cat "$work/$row.rss.$i")"
    if [ "$i" -gt 0 ] && ! cmp -s "$work/$row.0.json" "$work/$row.$i.json"; then
      echo "NOTE: $row: ${bins[$i]} decided differently from ${bins[0]}"
    fi
    [ -z "$keep" ] || cp "$work/$row.$i.json" "$keep/$row.$i.json"
  done
done
for row in "${row_list[@]}"; do
  python3 - "$row" "$work/$row.0.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[2]))
print(sys.argv[1], "requests", s["requests"], "unparsed", s["unparsed"])
for name, p in sorted(s["policies"].items()):
    print(f"  {name:8} checked {p['checked']:>9} denied {p['denied']:>9} tenants denied {p['tenants_denied']:>6}")
PY
done
echo "goal: 500000 lines per CPU second on one core, on both rows"
