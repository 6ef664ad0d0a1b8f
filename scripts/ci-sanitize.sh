#!/usr/bin/env bash
# The sanitizer and fuzz step of CI (issue 13 item 5; CONTRIBUTING.md "Fuzzing and sanitizers"):
# ONE clang build (build-ci-san/) where every library is compiled with
# -fsanitize=fuzzer-no-link,address,undefined at -O1 (GPUMUX_FUZZ=ON), serving both
#   1. the unit tests that exercise the input readers, the loader, the checked arithmetic, the
#      output target and the run, under AddressSanitizer + UndefinedBehaviorSanitizer, and
#   2. a short libFuzzer run from the committed corpus tests/fuzz/corpus (every corpus file is
#      replayed first: the corpus regression test under the sanitizers): FUZZ_SECONDS (default
#      60) on each surface (SURFACES below: the scenario and trace readers, the cluster files,
#      LLM cards and catalog tenants, plan and its -o folder, the result-file readers),
#      FUZZ_PARALLEL (default 3) at once, so the five take two rounds, about 2 x FUZZ_SECONDS.
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
# The corpus split by surface (the first byte picks the target, tests/fuzz/fuzz_inputs.cpp); each
# surface is fuzzed for FUZZ_SECONDS, FUZZ_PARALLEL surfaces at once (issue 36):
#   readers      scenario and trace readers (first byte < 0xF0; the target follows the byte)
#   cluster      the cluster section, openb CSVs, device-plugin and mig-parted configs (0xF0-0xF4)
#   llm-catalog  scenarios with an `llm:` card or a catalog `model:`, pinned to the scenario
#                target (load, resolve, validate's capacity checks, inspect's rows, a short run)
#   plan         `plan:` scenarios pinned to the plan target (a small plan, its -o DIR written)
#   results      result files pinned to the readers of `gpumux report` and `plot` (0xF6)
# GPUMUX_FUZZ_TARGET pins a surface's mutations to its target whatever their first byte.
SURFACES=${SURFACES:-"readers cluster llm-catalog plan results"}
FUZZ_PARALLEL=${FUZZ_PARALLEL:-3}
catalog='(llm:|model: *(resnet50|bert-|vit-b16|minilm-l6|gpt2|pointnet|whisper-))'
for surface in $SURFACES; do mkdir -p "$work/$surface" "$work/seeds-$surface"; done
for seed in tests/fuzz/corpus/*; do
  first=$(head -c1 "$seed" | od -An -tu1 | tr -d ' ')
  first=${first:-0}
  if [ "$first" -ge 246 ]; then surface=results
  elif [ "$first" -eq 245 ]; then surface=plan
  elif [ "$first" -ge 240 ]; then surface=cluster
  else surface=readers
  fi
  [ -d "$work/seeds-$surface" ] && cp "$seed" "$work/seeds-$surface/"
  if [ "$first" -lt 240 ] && [ -d "$work/seeds-llm-catalog" ] && grep -aqE "$catalog" "$seed"; then
    cp "$seed" "$work/seeds-llm-catalog/"
  fi
done
fuzz_surface() {
  local surface=$1 pinned= malloc_limit=2048
  case $surface in
    llm-catalog) pinned=0 ;;
    plan) pinned=16 ;;
    # The results surface decodes each file in a forked child (read_result_file_isolated), and
    # the HDF5 library there sizes its conversion buffer from a variable-length string's stored
    # length: a corrupt 32-bit length asks malloc for up to 4 GiB, which the child's read then
    # refuses as corrupt. libFuzzer's malloc hook still runs in the child and wrote that as an
    # out-of-memory finding (13 in one CI run of stop 43; reproduced: malloc(4244439048) in H5T__conv_vlen under
    # Group::read_string). A single allocation on this surface is therefore bounded by the RSS
    # limit (the parent's) and the child's timeout, not by -malloc_limit_mb.
    results) pinned=17 malloc_limit=1048576 ;;
  esac
  echo "ci-sanitize: fuzzing the $surface surface for ${FUZZ_SECONDS} s from tests/fuzz/corpus"
  if ! GPUMUX_FUZZ_TARGET=$pinned "$BUILD/tests/fuzz/fuzz_inputs" "$work/$surface" \
      "$work/seeds-$surface" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 \
      -malloc_limit_mb="$malloc_limit" -timeout=10 \
      -print_final_stats=1 -artifact_prefix="$findings/$surface-" \
      2>"$BUILD/fuzz-$surface.log"; then
    tail -40 "$BUILD/fuzz-$surface.log"
    echo "ci-sanitize: fuzz finding on the $surface surface in $findings/:"
    ls -l "$findings"
    return 1
  fi
  echo "ci-sanitize: $surface: $(grep -E '^stat::(number_of_executed_units|peak_rss_mb)' \
    "$BUILD/fuzz-$surface.log" | tr '\n' ' ')"
}
failed=0
running=0
for surface in $SURFACES; do
  fuzz_surface "$surface" &
  running=$((running + 1))
  if [ "$running" -ge "$FUZZ_PARALLEL" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
[ "$failed" -eq 0 ] || exit 1
# A finding written by a process that did not fail (a forked child) is a finding too.
if [ -n "$(ls -A "$findings")" ]; then
  echo "ci-sanitize: fuzz findings in $findings/:"
  ls -l "$findings"
  exit 1
fi
end=$(date +%s)
echo "ci-sanitize: build $((built - start)) s, sanitized tests $((tested - built)) s," \
  "fuzz $((end - tested)) s, total $((end - start)) s wall"
