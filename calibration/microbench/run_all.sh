#!/usr/bin/env bash
# Builds and runs the gpumux calibration microbenchmarks on the GPU of this machine.
#
#   bash calibration/microbench/run_all.sh [OUTDIR]      (OUTDIR default: $OUT, else ./out)
#
# Writes OUTDIR/microbench-raw.tar.gz (every CSV, nvidia-smi -q, nvcc --version, run info;
# re-packed after each step, so a killed run still leaves what it measured) and
# OUTDIR/run_all.log. Then: python3 calibration/microbench/fit.py OUTDIR
# Whole script: about 1-2 minutes; every step runs under `timeout`, and no step runs past
# MB_BUDGET_S + 10 s, so the whole script stays under 4 minutes.
# Only read-only queries are made of the GPU's settings: no clocks, compute mode, MIG,
# persistence or reset commands.
#
# Environment: NVCC (compiler; default: nvcc on PATH, else /usr/local/cuda/bin/nvcc),
# MB_ARCH (default sm_90), MB_BIN (prebuilt binaries dir: skip the build),
# MB_BUDGET_S (default 220: steps that would start after this many seconds are skipped),
# MB_QUICK=1 (short runs, for a smoke test).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUTDIR=${1:-${OUT:-./out}}
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpumux-mb.XXXXXX")
RAW=$WORK/raw
mkdir -p "$RAW"
LOG=$OUTDIR/run_all.log
: >"$LOG"
T0=$(date +%s)
BUDGET=${MB_BUDGET_S:-220}
ARCH=${MB_ARCH:-sm_90}
QUICK=${MB_QUICK:-0}
STATUS=0

log() { echo "[$(date +%H:%M:%S) +$(($(date +%s) - T0))s] $*" | tee -a "$LOG" >&2; }
pack() { tar -C "$WORK" -czf "$OUTDIR/microbench-raw.tar.gz.tmp" raw \
           && mv -f "$OUTDIR/microbench-raw.tar.gz.tmp" "$OUTDIR/microbench-raw.tar.gz"; }
left() { echo $((BUDGET - ($(date +%s) - T0))); }
# step NAME TIMEOUT_S CMD...: runs CMD under a hard timeout if the budget allows; logs rc.
step() {
  local name=$1 limit=$2 l; shift 2
  l=$(left)
  if [ "$l" -le 10 ]; then
    log "SKIP $name (budget: ${l}s left)"; echo "$name,skipped" >>"$RAW/steps.csv"; return 0
  fi
  [ "$limit" -le $((l + 10)) ] || limit=$((l + 10))  # never run far past the budget
  log "RUN  $name (timeout ${limit}s): $*"
  timeout -k 5 "$limit" "$@" >>"$LOG" 2>&1
  local rc=$?
  echo "$name,$rc" >>"$RAW/steps.csv"
  [ "$rc" -eq 0 ] || { log "FAIL $name rc=$rc"; STATUS=1; }
  pack
  return 0
}
echo "step,rc" >"$RAW/steps.csv"

# --- facts about the machine (read-only)
{
  echo "key,value"
  echo "date_utc,$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "uname,$(uname -srm | tr ',' ' ')"
  echo "script,calibration/microbench/run_all.sh"
  echo "git_commit,$(git -C "$HERE" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "mps_daemon,$( (pgrep -a nvidia-cuda-mps 2>/dev/null || true) | head -1 | tr ',' ' ')"
  echo "quick,$QUICK"
} >"$RAW/run-info.csv"
if command -v nvidia-smi >/dev/null 2>&1; then
  timeout 30 nvidia-smi -q >"$RAW/nvidia-smi-q.txt" 2>&1
  timeout 15 nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv >"$RAW/nvidia-smi-before.csv" 2>&1
else
  echo "nvidia-smi not found" >"$RAW/nvidia-smi-q.txt"
fi

# --- build
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
"$NVCC" --version >"$RAW/nvcc-version.txt" 2>&1 || echo "no nvcc at $NVCC" >>"$RAW/nvcc-version.txt"
if [ -n "${MB_BIN:-}" ]; then
  BIN=$MB_BIN
  log "using prebuilt binaries in $BIN"
else
  BIN=$WORK/bin
  mkdir -p "$BIN"
  log "building with $NVCC -arch=$ARCH -O3 into $BIN"
  timeout -k 5 150 "$NVCC" -arch="$ARCH" -O3 -std=c++17 -o "$BIN/timeslice_probe" "$HERE/timeslice_probe.cu" >>"$LOG" 2>&1 &
  p1=$!
  timeout -k 5 150 "$NVCC" -arch="$ARCH" -O3 -std=c++17 -o "$BIN/launch_probe" "$HERE/launch_probe.cu" >>"$LOG" 2>&1 &
  p2=$!
  wait $p1; r1=$?
  wait $p2; r2=$?
  echo "build_timeslice_probe,$r1" >>"$RAW/steps.csv"
  echo "build_launch_probe,$r2" >>"$RAW/steps.csv"
  if [ $r1 -ne 0 ] || [ $r2 -ne 0 ]; then
    log "BUILD FAILED (timeslice_probe rc=$r1, launch_probe rc=$r2); see $LOG"
    pack
    exit 2
  fi
fi
TS=$BIN/timeslice_probe
LP=$BIN/launch_probe

if [ "$QUICK" = 1 ]; then
  DUR=300; SKDUR=500; LPARGS=(--kernels 2000 --reps 3 --bw-mib 256 --warmup-ms 200)
else
  DUR=2000; SKDUR=3000; LPARGS=()
fi

# --- 1. warm-up + launch overhead + bandwidth (its first 1.5 s lift the clocks off idle)
step launch_probe 60 "$LP" --out "$RAW/launch.csv" --device-out "$RAW/device.csv" "${LPARGS[@]}"
step resolution 20 "$TS" resolution
grep -h '^globaltimer' "$LOG" >"$RAW/resolution.csv" 2>/dev/null || true

# --- 2. time-slicing: N spinning processes, N = 1 (control), 2, 3, 4
for n in 1 2 3 4; do
  step "ts_n$n" 45 "$TS" drive --nproc "$n" --duration-ms "$DUR" --threshold-ns 2000 --out "$RAW/ts_n$n"
done

# --- 3. short kernels: alone (control), beside a spinner (sync, random phase), queued batches
step sk_ctrl 30 "$TS" shortk --neighbours 0 --duration-ms "$SKDUR" --kernel-us 5 --sleep-max-us 5000 --out "$RAW/sk_ctrl"
step sk_sync 30 "$TS" shortk --neighbours 1 --duration-ms "$SKDUR" --kernel-us 5 --sleep-max-us 5000 --out "$RAW/sk_sync"
step sk_queued 30 "$TS" shortk --neighbours 1 --duration-ms "$SKDUR" --kernel-us 5 --sleep-max-us 5000 --sync 0 --batch 32 --out "$RAW/sk_queued"

# --- 4. N = 2 again at the end: does the result drift (clocks, temperature)?
step ts_n2b 45 "$TS" drive --nproc 2 --duration-ms "$DUR" --threshold-ns 2000 --out "$RAW/ts_n2b"

if command -v nvidia-smi >/dev/null 2>&1; then
  timeout 15 nvidia-smi --query-gpu=name,driver_version,compute_mode,mig.mode.current,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv >"$RAW/nvidia-smi-after.csv" 2>&1
fi
cp "$LOG" "$RAW/run_all.log"
pack
rm -rf "$WORK"
log "done in $(($(date +%s) - T0))s, status $STATUS; raw data: $OUTDIR/microbench-raw.tar.gz"
log "next: python3 $HERE/fit.py $OUTDIR"
exit $STATUS
