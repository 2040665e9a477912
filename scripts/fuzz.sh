#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-16, ASan + UBSan) and runs each for a bounded time from
# the committed corpus in tests/fuzz/corpus/<target>/, with the dictionary
# tests/fuzz/dict/<target>.dict when there is one. Exits non-zero on the first finding; the
# crashing input is left in build-fuzz/findings/ (turn it into a regression test).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   default 20 s each (CI), every target;
#                                                      FUZZ_JOBS targets at a time (default 1)
#   scripts/fuzz.sh --long [TARGET...]                 600 s each (FUZZ_LONG_SECONDS), then --merge
#   scripts/fuzz.sh --merge [TARGET...]                merge what runs found into the corpus
#   scripts/fuzz.sh --build [TARGET...]                build the targets, run nothing
#
# New inputs go to build-fuzz/corpus/<target>/ (never committed). --merge runs libFuzzer's
# -merge=1 into tests/fuzz/corpus/<target>/: it adds only the inputs that reach coverage the
# committed corpus does not, so the corpus grows but stays minimal; commit it, and every later
# run (CI's too) starts from what earlier runs reached. A --long run takes 10 minutes per
# target (about 100 minutes for all); run it under `nice -n 19` on a shared machine.
# Each run appends "date target seconds_run executions new_units" to build-fuzz/fuzz-stats.tsv.
# -timeout=30: an input that runs 30 s is a hang worth a finding; libFuzzer's 5 s was reached by
# ordinary inputs of an ASan target sharing a loaded 2-core machine, a finding with no bug.
set -euo pipefail
cd "$(dirname "$0")/.."
all_targets=(check_request registry duration headers cidr identity path redis_reply cluster_redirect redis_url http_auth rls)

mode=run
seconds=20
if [[ ${1:-} == --long ]]; then
  mode=long
  seconds=${FUZZ_LONG_SECONDS:-600}
  shift
elif [[ ${1:-} == --merge ]]; then
  mode=merge
  shift
elif [[ ${1:-} == --build ]]; then
  mode=build
  shift
elif [[ ${1:-} =~ ^[0-9]+$ ]]; then
  seconds=$1
  shift
fi
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")

CXX=clang++-16 cmake -G Ninja -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRATELIMITD_FUZZ=ON -DRATELIMITD_WERROR=ON \
  -DRATELIMITD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j2 --target "${targets[@]/#/fuzz_}"
[[ $mode != build ]] || exit 0

merge() {
  local t=$1
  [[ -d build-fuzz/corpus/$t ]] || return 0
  local before after
  before=$(ls tests/fuzz/corpus/"$t" | wc -l)
  ./build-fuzz/tests/fuzz/fuzz_$t -merge=1 -timeout=30 -rss_limit_mb=2048 tests/fuzz/corpus/"$t" \
    build-fuzz/corpus/"$t" 2>build-fuzz/merge_$t.log
  after=$(ls tests/fuzz/corpus/"$t" | wc -l)
  echo "=== fuzz_$t: corpus $before -> $after inputs ($(cat tests/fuzz/corpus/"$t"/* | wc -c) bytes)"
}

if [[ $mode == merge ]]; then
  for t in "${targets[@]}"; do merge "$t"; done
  exit 0
fi

mkdir -p build-fuzz/findings
# One target's run; its report goes to build-fuzz/run_TARGET.out (printed when it ends).
fuzz_one() {
  local t=$1 work=build-fuzz/corpus/$1 dict=() started=$SECONDS status=0 execs units ran
  mkdir -p "$work"
  [[ -f tests/fuzz/dict/$t.dict ]] && dict=(-dict=tests/fuzz/dict/"$t".dict)
  echo "=== fuzz_$t: ${seconds}s"
  # New inputs go to build-fuzz/corpus; the committed corpus changes only by --merge.
  if ! ./build-fuzz/tests/fuzz/fuzz_$t -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
       "${dict[@]}" -print_final_stats=1 -artifact_prefix=build-fuzz/findings/"$t"- "$work" \
       tests/fuzz/corpus/"$t" 2>build-fuzz/fuzz_$t.log; then
    tail -40 build-fuzz/fuzz_$t.log
    echo "FINDING in fuzz_$t: see build-fuzz/findings/"
    status=1
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' build-fuzz/fuzz_$t.log)
  units=$(sed -n 's/^stat::new_units_added: *//p' build-fuzz/fuzz_$t.log)
  ran=$((SECONDS - started))  # less than asked when it stopped at a finding
  echo "executions=${execs:-?} new_units=${units:-?} seconds=$ran"
  printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$ran" "${execs:-?}" "${units:-?}" \
    >>build-fuzz/fuzz-stats.tsv
  if [[ $mode == long && $status == 0 ]]; then merge "$t"; fi
  return $status
}

# FUZZ_JOBS targets at a time: each libFuzzer run is one process on one core.
jobs_max=${FUZZ_JOBS:-1}
status=0
pids=()
finish() {  # index into targets/pids
  wait "${pids[$1]}" || status=1
  cat build-fuzz/run_"${targets[$1]}".out
}
next_done=0
for i in "${!targets[@]}"; do
  if (( i - next_done >= jobs_max )); then finish "$next_done"; next_done=$((next_done + 1)); fi
  fuzz_one "${targets[$i]}" >build-fuzz/run_"${targets[$i]}".out 2>&1 &
  pids+=($!)
done
for (( ; next_done < ${#targets[@]}; next_done++ )); do finish "$next_done"; done
exit $status
