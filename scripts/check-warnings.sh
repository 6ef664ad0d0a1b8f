#!/usr/bin/env bash
# Fails (exit 1) when a build log has compiler warnings; prints them. The build is warning-free
# under GCC 12 -Wall -Wextra; .ci/run runs this on the output of `make build`.
# lto-wrapper's "using serial compilation of N LTRANS jobs" is a note about parallelism, not
# about the code, and is ignored.
set -euo pipefail
log="${1:?usage: check-warnings.sh BUILD.log}"
warnings="$(grep -E ': warning: ' "$log" | grep -v '^lto-wrapper:' || true)"
if [ -n "$warnings" ]; then
  echo "check-warnings: the build printed compiler warnings (the build must be warning-free):" >&2
  printf '%s\n' "$warnings" >&2
  exit 1
fi
