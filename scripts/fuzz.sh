#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, ASan + UBSan, the library instrumented
# for coverage) in build/fuzz and runs each for a number of executions, starting from the
# kept corpus tests/fuzz/corpus/<target>. New inputs that add coverage are merged back into
# that directory (commit them: tests/cpp/test_fuzz_corpora.cpp replays them in every build).
#
#   scripts/fuzz.sh                      # every target, 10^7 executions each
#   RUNS=100000 scripts/fuzz.sh json     # one target, fewer executions
#
# Needs clang and its runtimes (Debian: clang-14 libclang-rt-14-dev libomp-14-dev) and the
# Python packages the build finds its dependencies with (scipy-openblas32, nlohmann-json).
# A crash leaves the input in build/fuzz/crash-* and makes the script fail.
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${RUNS:-10000000}"
cc="${CLANG:-$(command -v clang++ || command -v clang++-14)}"
build=build/fuzz
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cc" \
  -DSPIRALTORCH_CUDA=OFF -DSPIRALTORCH_SHARED=OFF -DSPIRALTORCH_ONEDNN=OFF \
  -DSPIRALTORCH_BUILD_EXAMPLES=OFF -DSPIRALTORCH_BUILD_FUZZERS=ON >/dev/null
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors json bincode manifest structure spiralk)
ninja -C "$build" "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for t in "${targets[@]}"; do
  kept="tests/fuzz/corpus/$t"
  work="$build/corpus/$t"
  mkdir -p "$work" "$kept"
  extra=()
  [ "$t" = safetensors ] && extra=(tests/data/bad_safetensors)
  echo "== fuzz_$t: $runs executions"
  # -max_len bounds the inputs the mutator builds; the readers' size checks are exercised
  # by the declared sizes inside them, not by megabyte inputs.
  rc=0
  (cd "$build" && ./"fuzz_$t" -runs="$runs" -max_len=4096 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    "corpus/$t" "../../$kept" "${extra[@]/#/../../}") >"$build/fuzz_$t.log" 2>&1 || rc=$?
  grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::average_exec_per_sec|SUMMARY)" "$build/fuzz_$t.log" || true
  if [ $rc -ne 0 ]; then
    tail -40 "$build/fuzz_$t.log" >&2
    echo "fuzz_$t failed (rc=$rc); the input is in $build/ (crash-*, leak-*, timeout-*, oom-*)" >&2
    exit 1
  fi
  # Keep a minimal set of inputs that covers what the run reached.
  (cd "$build" && ./"fuzz_$t" -merge=1 "../../$kept" "corpus/$t" 2>&1 | grep -E "MERGE-OUTER: [0-9]+ new files" || true)
done
