#!/usr/bin/env bash
# Installs what is missing, then builds and runs the whole test suite: unit, integration (a
# private redis-server, nginx, php -S ... on free loopback ports, started by the tests) and
# shell scenarios, via ctest. Works as root and as a user with sudo (only the package install
# and the container tests elevate). Stages, each printing its duration:
#   1. Release build with the tests (warnings are errors), the whole suite on it, the Debian
#      package (cpack -G DEB) from the same build;
#   2. the container image, built with README.md's container command exactly as printed and
#      run as users run it (beside stage 1's suite); README.md's first command, exactly as
#      printed, in a fresh Debian 12 container until it answers a check (alone: it is timed);
#      the package installed in a fresh container (beside stage 3's build;
#      scripts/container-test.sh);
#   3. an AddressSanitizer + UndefinedBehaviorSanitizer build (RelWithDebInfo: the other build
#      type; clang) and the whole suite again on it; every spawned ratelimitd must
#      exit 0 on SIGTERM with no sanitizer report in its log;
#   4. every libFuzzer target for FUZZ_SECONDS each (default 20; scripts/fuzz.sh), two at a time
#      (built beside stage 3, at the lowest priority).
# A stage that computes (a compile) runs beside one that mostly waits (a suite): the suite holds
# (it passes with every core busy: --under-load), and the run is shorter by the compile.
# ccache, when installed, makes a second run recompile only what changed.
#   scripts/test.sh              everything
#   scripts/test.sh --plain      stage 1's build and tests only (quicker while developing)
#   scripts/test.sh --repeat N   stage 1's build, then each of its tests N times in a row
#                                (ctest --repeat until-fail:N; for hunting flaky tests)
#   scripts/test.sh --under-load [--plain | --repeat N]
#                                the same while one busy loop per core keeps every core busy
#                                (as CI on a developer's machine still at work): proves no wait
#                                in the suite or the scripts is a guess of the machine's speed
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/test.sh [--under-load] [--plain | --repeat N]"
mode=all
repeat=1
under_load=0
if [ "${1:-}" = --under-load ]; then under_load=1; shift; fi
case "${1:-}" in
  "") ;;
  --plain) mode=plain ;;
  --repeat) mode=plain; repeat=${2:?$usage} ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
bash scripts/install-deps.sh   # elevates only the apt-get it needs

# Cache hits across checkouts of the same tree (a clean clone reuses a developer's objects).
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1

busy_pids=()
if [ "$under_load" = 1 ]; then
  # One busy loop per core, each ended by `timeout` after 3 hours at the latest and by the trap
  # when the run ends, so none outlives the run.
  for _ in $(seq 1 "$(nproc)"); do
    timeout 3h bash -c 'while :; do :; done' &
    busy_pids+=($!)
  done
  echo "=== under load: ${#busy_pids[@]} busy loops (pids ${busy_pids[*]})"
fi

started=$SECONDS
stage_started=$SECONDS
stage_done() { echo "=== $1 took $(( SECONDS - stage_started )) s"; stage_started=$SECONDS; }

build() {  # build-dir, cmake args...
  local dir=$1; shift
  echo "=== $dir: configure and build"
  cmake -G Ninja -S . -B "$dir" -DRATELIMITD_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j2
}

# Tests at a time: twice the cores. The suite mostly waits (on windows, servers starting, its
# own bounded polls), not computes: on this 2-core machine the Release suite took 356 s at -j2,
# where its tests' times summed to 612 s (1.7 at once), and 215 s at -j4 with the machine also
# building a container image. Suites that bound a latency hold a resource lock (tests/CMakeLists.txt).
test_jobs=${RATELIMITD_TEST_JOBS:-$(( $(nproc) * 2 ))}

run_tests() {  # build-dir [ctest args...]
  local dir=$1; shift
  echo "=== $dir: test ($test_jobs at a time)"
  # pipefail (set above) makes a failing ctest fail the script despite the tee.
  (cd "$dir" && ctest --output-on-failure -j"$test_jobs" --timeout 300 "$@" | tee ctest.log)
}

passed_in() { sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$1/ctest.log"; }

# beside NAME COMMAND...: runs a stage in the background while the next one runs in the
# foreground; its output is kept and printed by join_beside, which waits for it, prints its
# time and fails the run if it failed.
side_pid="" side_name="" side_log="" side_started=0
beside() {
  side_name=$1; shift
  side_log=$(mktemp); side_started=$SECONDS
  echo "=== $side_name: beside the next stage (its output follows when it ends)"
  "$@" >"$side_log" 2>&1 &
  side_pid=$!
}
join_beside() {
  local rc=0
  wait "$side_pid" || rc=$?
  side_pid=""
  cat "$side_log"; rm -f "$side_log"
  echo "=== $side_name took $(( SECONDS - side_started )) s (beside)"
  [ "$rc" -eq 0 ] || { echo "=== $side_name failed (exit $rc)" >&2; exit "$rc"; }
}
# Nothing outlives the run: the busy loops and a stage still beside one that failed.
stop_background() {
  [ -z "$side_pid" ] || kill "$side_pid" 2>/dev/null || true
  [ "${#busy_pids[@]}" -eq 0 ] || kill "${busy_pids[@]}" 2>/dev/null || true
}
trap stop_background EXIT

if [ "$mode" = all ]; then
  # The containers' Debian 12 base (on a new machine: 30 s of downloads and unpacking), made
  # while the Release build compiles, so the image stage beside the suite starts from it.
  beside "container base image" $SUDO bash scripts/container-test.sh base
fi
build build -DCMAKE_BUILD_TYPE=Release
if [ "$mode" = all ]; then
  join_beside
  beside "container image (README's command) and run" $SUDO bash scripts/container-test.sh image
fi
if [ "$repeat" -gt 1 ]; then
  run_tests build --repeat until-fail:"$repeat"
else
  run_tests build
fi
total=$(passed_in build)
if [ "$mode" = all ]; then
  rm -f build/ratelimitd_*.deb
  (cd build && cpack -G DEB >/dev/null)
  join_beside
fi
if [ "$mode" = all ]; then stage_done "Release build, tests and package (and the image beside)"; else stage_done "Release build and tests"; fi

if [ "$mode" = all ]; then
  $SUDO bash scripts/container-test.sh readme
  stage_done "README's first command in a fresh Debian 12 container"
  # Beside the sanitized build and then its suite: the package's install test (a container,
  # 16 s), then the fuzz targets' build at the lowest priority (nice 19), on the CPU the two
  # leave idle (the build's configure, code generation and links; the suite's waits). Started
  # with the suite instead, it ended 49 s after it in a cold run.
  package_test_then_fuzz_build() {
    $SUDO bash scripts/container-test.sh deb build/ratelimitd_*.deb
    nice -n 19 bash scripts/fuzz.sh --build
  }
  beside "package install test, then the fuzz targets' build (nice 19)" package_test_then_fuzz_build
  # Leaks and undefined behaviour fail the run; the spawned ratelimitd inherits these options.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # With clang: at -O0 it compiles the sanitized build in about half GCC's time (the heaviest
  # test batch: 17 CPU-s against 31), and its UndefinedBehaviorSanitizer checks what GCC's
  # does and more (`function`, `vptr`). The Release build and the package stay GCC's.
  CXX=clang++-16 build build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRATELIMITD_SANITIZE=ON
  # Twice the cores as well: the sanitized suite waits far more than it computes (484 CPU-s in
  # 622 s of a run at one test per core: 0.8 of 2 cores), and at 4 at a time it took 343 to
  # 347 s while another build kept the machine at a load of 5. The fuzz build beside it stays at
  # nice 19: a compile at normal priority beside it (with two more builds) once made four of
  # its bounded waits run out.
  run_tests build-asan
  total=$(( total + $(passed_in build-asan) ))
  join_beside
  stage_done "ASan+UBSan build and tests (the package test and the fuzz targets' build beside)"
  echo "=== fuzz targets"
  FUZZ_JOBS=2 bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
  stage_done "fuzz targets"
fi
# One closing line for everything that ran.
echo "tests: $total passed, 0 failed; $(( SECONDS - started )) s in all"
