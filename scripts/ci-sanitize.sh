#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (issue 13 item 5):
# configures build-asan/ with GCC and -DGPUMUX_SANITIZE=address,undefined (no Python module, no
# benchmarks), builds the unit tests and the fuzz corpus replay, and runs ctest without the
# pytest suite (the CLI tests drive a binary through Python; the unit tests and the corpus
# cover the same code in-process). Any sanitizer report aborts its test. Prints the wall time.
#   scripts/ci-sanitize.sh            # from the repository root
#   BUILD=build-asan JOBS=2 scripts/ci-sanitize.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build-asan}
JOBS=${JOBS:-2}
start=$(date +%s)
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
  -DGPUMUX_SANITIZE=address,undefined -DGPUMUX_BUILD_PYTHON=OFF -DGPUMUX_BUILD_BENCH=OFF \
  "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j"$JOBS"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# layers.* tests rebuild probes (not sanitizer-specific) and pytest_cli needs the Python module.
(cd "$BUILD" && ctest --output-on-failure -j"$JOBS" -E '^(pytest_cli|layers\.)')
echo "ci-sanitize: $(( $(date +%s) - start )) s wall"
