#!/bin/bash
# Run-loop instructions per request of the M/D/1 benchmark (issue 12 item 1), for a shared or
# loaded machine where wall-clock times are too noisy: the compare_simpy.py scenario (rho = 0.7
# unless given, 1 ms kernels, exclusive H100) at 50k requests under callgrind, counting only
# inside Simulator::run_until (setup, summary and output excluded), divided by the completed
# requests.
#
# usage: bench/callgrind_md1.sh [build/gpumux] [requests] [rho]   (needs valgrind)
set -euo pipefail
binary=${1:-build/gpumux}
requests=${2:-50000}
rho=${3:-0.7}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$here" "$tmp/md1.yaml" "$requests" "$rho" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import compare_simpy
n, service = int(sys.argv[3]), 1e-3
rate = round(float(sys.argv[4]) / service, 6)
with open(sys.argv[2], "w") as f:
    f.write(compare_simpy.SCENARIO.format(duration=f"{n / rate}s", rate=rate,
                                          service_us=round(service * 1e6)))
PY
valgrind --tool=callgrind --callgrind-out-file="$tmp/callgrind.out" \
  --toggle-collect='gpumux::Simulator::run_until(long)' \
  "$binary" run "$tmp/md1.yaml" --json >"$tmp/summary.json" 2>"$tmp/valgrind.txt"
/usr/bin/python3 - "$tmp/valgrind.txt" "$tmp/summary.json" <<'PY'
import json, re, sys
collected = int(re.search(r"Collected : (\d+)", open(sys.argv[1]).read()).group(1))
completed = json.load(open(sys.argv[2]))["tenants"]["t"]["completed"]
print(f"run loop: {collected} instructions, {completed} requests: "
      f"{collected / completed:.0f} instructions/request")
PY
