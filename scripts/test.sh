#!/usr/bin/env bash
# Installs what is missing, then builds and runs the whole test suite twice: the plain build
# and an AddressSanitizer + UndefinedBehaviorSanitizer build. Unit, integration (a private
# redis-server on a free loopback port, started by the tests) and shell scenarios, via ctest.
# Warnings are errors in these builds (RATELIMITD_WERROR). Then a Release build with the tests
# (compiled, not run: every build type must build) packaged with cpack -G DEB, the container
# image and the package proven in containers (scripts/container-test.sh), and every libFuzzer
# target for FUZZ_SECONDS each (default 20; scripts/fuzz.sh). Each stage prints its duration.
#   scripts/test.sh           everything
#   scripts/test.sh --plain   the plain build only (quicker while developing)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

stage_started=$SECONDS
stage_done() { echo "=== $1 took $(( SECONDS - stage_started )) s"; stage_started=$SECONDS; }

run_suite() {  # build-dir, extra cmake args...
  local dir=$1; shift
  echo "=== $dir: configure and build"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRATELIMITD_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j2
  echo "=== $dir: test"
  # pipefail (set above) makes a failing ctest fail the script despite the tee.
  (cd "$dir" && ctest --output-on-failure -j2 --timeout 300 | tee ctest.log)
}

passed_in() { sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$1/ctest.log"; }

run_suite build
stage_done "plain build and tests"
if [ "${1:-}" != "--plain" ]; then
  echo "=== build-release-tests: Release build with the tests (built, not run), Debian package"
  # Without -Werror: GCC 12 at -O3 reports a known -Wrestrict false positive in std::string.
  cmake -S . -B build-release-tests -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-release-tests -j2
  rm -f build-release-tests/ratelimitd_*.deb
  (cd build-release-tests && cpack -G DEB >/dev/null)
  stage_done "Release build and package"
  bash scripts/container-test.sh image
  stage_done "container image build and run"
  bash scripts/container-test.sh deb build-release-tests/ratelimitd_*.deb
  stage_done "package install test"
  # Leaks and undefined behaviour fail the run; the spawned ratelimitd inherits these options.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_suite build-asan -DRATELIMITD_SANITIZE=ON
  stage_done "ASan+UBSan build and tests"
  echo "=== fuzz targets"
  bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
  stage_done "fuzz targets"
fi
# One closing line for everything that ran.
total=$(( $(passed_in build) + $( [ -f build-asan/ctest.log ] && [ "${1:-}" != "--plain" ] && passed_in build-asan || echo 0) ))
echo "tests: $total passed, 0 failed"
