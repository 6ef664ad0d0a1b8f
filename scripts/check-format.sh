#!/usr/bin/env bash
# The house format (.clang-format: Google style, 100 columns, includes left in their order):
#   scripts/check-format.sh         exit 1 and list the files clang-format would change
#   scripts/check-format.sh --fix   reformat them in place
# The tree is formatted with clang-format 14 (Debian 12's `clang-format`, installed by
# scripts/install-deps.sh); another major version may format some lines differently, so the
# check says which version it used. Files: every tracked C++ source and header.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format not found (make deps installs it)" >&2
  exit 2
fi
version="$(clang-format --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')"
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
mapfile -t unformatted < <(clang-format --dry-run "${files[@]}" 2>&1 |
                           sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' |
                           sort -u)
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "check-format: ${#unformatted[@]} file(s) not in the house format (clang-format $version):" >&2
  printf '  %s\n' "${unformatted[@]}" >&2
  echo "fix with: scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} C++ files formatted (clang-format $version)"
