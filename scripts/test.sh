#!/usr/bin/env bash
# Installs what is missing, then builds and runs the whole test suite twice: the plain build
# and an AddressSanitizer + UndefinedBehaviorSanitizer build. Unit, integration (a private
# redis-server on a free loopback port, started by the tests) and shell scenarios, via ctest.
# Then every libFuzzer target for FUZZ_SECONDS each (default 20; scripts/fuzz.sh).
#   scripts/test.sh           both builds and the fuzz targets
#   scripts/test.sh --plain   the plain build only (quicker while developing)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

run_suite() {  # build-dir, extra cmake args...
  local dir=$1; shift
  echo "=== $dir: configure and build"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j2
  echo "=== $dir: test"
  # pipefail (set above) makes a failing ctest fail the script despite the tee.
  (cd "$dir" && ctest --output-on-failure -j2 --timeout 300 | tee ctest.log)
}

passed_in() { sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$1/ctest.log"; }

run_suite build
if [ "${1:-}" != "--plain" ]; then
  # Leaks and undefined behaviour fail the run; the spawned ratelimitd inherits these options.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_suite build-asan -DRATELIMITD_SANITIZE=ON
  echo "=== fuzz targets"
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
fi
# One closing line for everything that ran.
total=$(( $(passed_in build) + $( [ -f build-asan/ctest.log ] && [ "${1:-}" != "--plain" ] && passed_in build-asan || echo 0) ))
echo "tests: $total passed, 0 failed"
