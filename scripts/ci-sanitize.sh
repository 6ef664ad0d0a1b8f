#!/usr/bin/env bash
# The sanitizer and fuzz step of CI (issue 13 item 5; CONTRIBUTING.md "Fuzzing and sanitizers"):
# ONE clang build (build-ci-san/) where every library is compiled with
# -fsanitize=fuzzer-no-link,address,undefined at -O1 (GPUMUX_FUZZ=ON), serving both
#   1. the unit tests that exercise the input readers, the loader, the checked arithmetic, the
#      output target and the run, under AddressSanitizer + UndefinedBehaviorSanitizer, and
#   2. a short libFuzzer run (FUZZ_SECONDS, default 60, in total) from the committed corpus
#      tests/fuzz/corpus (every corpus file is replayed first: the corpus regression test
#      under the sanitizers), split in two: half from the seeds of the scenario and trace
#      readers, half from those of the issue-27 targets (first byte 0xF0-0xFF: the cluster
#      section, openb CSVs, device-plugin and mig-parted configs, plan; tests/fuzz/fuzz_inputs.cpp).
# Any sanitizer report, failed test, crash, hang (> 10 s per case), memory blow-up (> 2 GB) or
# exception other than UserError fails the script; a fuzz finding is kept in
# BUILD/fuzz-findings/ (minimise it and add it to tests/fuzz/corpus with the fix).
# Not everything is sanitized: the full suite (25 test programs, the pytest suite through a
# sanitized Python module) did not fit CI's 20 minutes on 2 cores; CONTRIBUTING.md gives the
# measured times and the choice.
#   scripts/ci-sanitize.sh                       # from the repository root
#   BUILD=build-ci-san JOBS=2 FUZZ_SECONDS=60 scripts/ci-sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-ci-san}
JOBS=${JOBS:-2}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
# The sanitized unit tests: readers, loader and overrides, checked arithmetic, input-file limits,
# output targets, the front door (load -> resolve -> simulate), traces, observers and sampling.
TESTS=${TESTS:-"test_checked test_input_file test_strings test_csv test_units test_scenario_loader \
test_trace_reader test_kernel_trace test_output_target test_application test_metrics_observers \
test_scenario_golden"}
start=$(date +%s)
for tool in clang clang++; do
  command -v "$tool" >/dev/null || { echo "ci-sanitize: $tool not found (make deps installs it)"; exit 1; }
done
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
  -DGPUMUX_FUZZ=ON -DGPUMUX_BUILD_PYTHON=OFF -DGPUMUX_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
# shellcheck disable=SC2086  # TESTS is a word list
cmake --build "$BUILD" -j"$JOBS" --target fuzz_inputs $TESTS
built=$(date +%s)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for t in $TESTS; do
  exe=$(find "$PWD/$BUILD" -name "$t" -type f -perm -u+x | head -1)
  [ -n "$exe" ] || { echo "ci-sanitize: $t was not built"; exit 1; }
  echo "ci-sanitize: $t"
  (cd "$BUILD" && "$exe" --gtest_brief=1)
done
tested=$(date +%s)
findings="$BUILD/fuzz-findings"
work="$BUILD/fuzz-corpus"
rm -rf "$findings" "$work"
mkdir -p "$findings" "$work"
# The corpus split by target family (the first byte): readers (< 0xF0) and issue 27 (>= 0xF0).
for family in readers cluster; do mkdir -p "$work/$family" "$work/seeds-$family"; done
for seed in tests/fuzz/corpus/*; do
  first=$(head -c1 "$seed" | od -An -tu1 | tr -d ' ')
  if [ "${first:-0}" -ge 240 ]; then family=cluster; else family=readers; fi
  cp "$seed" "$work/seeds-$family/"
done
half=$(( (FUZZ_SECONDS + 1) / 2 ))
for family in readers cluster; do
  echo "ci-sanitize: fuzzing the $family targets for ${half} s from tests/fuzz/corpus"
  if ! "$BUILD/tests/fuzz/fuzz_inputs" "$work/$family" "$work/seeds-$family" \
      -max_total_time="$half" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$findings/" 2>"$BUILD/fuzz-$family.log"; then
    tail -40 "$BUILD/fuzz-$family.log"
    echo "ci-sanitize: fuzz finding in $findings/:"
    ls -l "$findings"
    exit 1
  fi
  grep -E '^(#[0-9]+ +DONE|stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb))' \
    "$BUILD/fuzz-$family.log" || true
done
end=$(date +%s)
echo "ci-sanitize: build $((built - start)) s, sanitized tests $((tested - built)) s," \
  "fuzz $((end - tested)) s, total $((end - start)) s wall"
