#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan) and runs each for a bounded time from
# the seed corpus in tests/fuzz/corpus/<target>/. Exits non-zero on the first finding; the
# crashing input is left in build-fuzz/findings/ (turn it into a regression test).
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     default 20
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
targets=(check_request registry duration headers cidr identity)

CXX=clang++-14 cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRATELIMITD_FUZZ=ON -DRATELIMITD_WERROR=ON \
  -DRATELIMITD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j2 --target "${targets[@]/#/fuzz_}"

mkdir -p build-fuzz/findings
status=0
for t in "${targets[@]}"; do
  work=build-fuzz/corpus/$t
  mkdir -p "$work"
  echo "=== fuzz_$t: ${seconds}s"
  # New inputs go to build-fuzz/corpus; the committed seeds stay as they are.
  if ! ./build-fuzz/tests/fuzz/fuzz_$t -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix=build-fuzz/findings/"$t"- "$work" tests/fuzz/corpus/"$t" \
       2>build-fuzz/fuzz_$t.log; then
    tail -40 build-fuzz/fuzz_$t.log
    echo "FINDING in fuzz_$t: see build-fuzz/findings/"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" build-fuzz/fuzz_$t.log | tr '\n' ' '
    echo
  fi
done
exit $status
