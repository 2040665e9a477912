#!/usr/bin/env bash
# How long an xDS config takes from message to rules in force (decode, compile, swap, audit
# diff), in domains of 10,000 descriptors with nesting (xds) and as one flat domain (xds-flat),
# and a config file of as many policies to parse and validate, without the network:
# bench/xds_compile.cpp once per size and round, the sizes interleaved within each round so a
# busy moment on the machine falls on every size alike. Prints each figure's median and its
# spread (min–max) over the rounds. Give --binary more than once to compare builds (old and
# new, interleaved run by run). The goal (issue 45 item 4): 90,000 descriptors in at most 1 s.
#   bench/xds_compile.sh [--rounds N] [--sizes "10000 40000 90000"] [--files "50000 100000"]
#                        [--binary PATH]...
# Not a test: nothing here runs in the suite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
rounds=5 sizes="10000 40000 90000" files="50000 100000" bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    --binary) bins+=("$2"); shift 2 ;;
    *) echo "usage: bench/xds_compile.sh [--rounds N] [--sizes LIST] [--files LIST] [--binary PATH]..."; exit 2 ;;
  esac
done
if [ ${#bins[@]} -eq 0 ]; then
  cmake --build build -j2 --target xds_compile_bench >/dev/null
  bins=("$root/build/xds_compile_bench")
fi
work=$(mktemp -d /tmp/xds-compile-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

# One line per run into $work/<binary index>-<kind>-<size>: decode_ms swap_ms total_ms.
for _ in $(seq 1 "$rounds"); do
  for b in "${!bins[@]}"; do
    for n in $sizes; do
      "${bins[$b]}" "$n" --flat | sed -E 's/.*decode_ms=([0-9.]+) swap_ms=([0-9.]+) total_ms=([0-9.]+).*/\1 \2 \3/' \
        >>"$work/$b-xds-flat-$n"
      "${bins[$b]}" "$n" | sed -E 's/.*decode_ms=([0-9.]+) swap_ms=([0-9.]+) total_ms=([0-9.]+).*/\1 \2 \3/' \
        >>"$work/$b-xds-$n"
    done
    for n in $files; do
      "${bins[$b]}" "$n" --file | sed -E 's/.*decode_ms=([0-9.]+) swap_ms=([0-9.]+) total_ms=([0-9.]+).*/\1 \2 \3/' \
        >>"$work/$b-file-$n"
    done
  done
done

# The median of one column, with its spread: "m (lo–hi)".
stat() {
  cut -d' ' -f"$2" "$1" | sort -n |
    awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.0f (%.0f–%.0f)", m, a[1], a[NR]}'
}
echo "median (min–max) over $rounds rounds, milliseconds; $(nproc) cores, $(uname -m)"
echo "| binary | input | size | decode+compile | swap+audit diff | total |"
echo "|---|---|---|---|---|---|"
for b in "${!bins[@]}"; do
  for kind in xds xds-flat file; do
    list=$sizes; [ "$kind" = file ] && list=$files
    for n in $list; do
      f="$work/$b-$kind-$n"
      echo "| ${bins[$b]} | $kind | $n | $(stat "$f" 1) | $(stat "$f" 2) | $(stat "$f" 3) |"
    done
  done
done
