#!/usr/bin/env python3
"""Synthetic microbenchmark output with known parameters, for testing fit.py without a GPU.

Writes the same files, in the same formats, that run_all.sh packs (ts_nN_{gaps,meta}.csv,
sk_{ctrl,sync}_{gaps,meta,kernels}.csv, launch.csv, device.csv, nvidia-smi-q.txt,
run-info.csv), from a simple model of round-robin time-slicing:

* A context that holds the GPU runs for a slice of T (+ Gaussian jitter) and is then switched
  out if another context has work; the idle gap between two contexts' runs is the switch cost S
  (+ jitter). A context alone on the GPU is never switched out.
* Each spinner's kernel starts the first time its context runs and ends `duration` later.
* Stalls: short gaps (2.5-4 us) inside a run, at `stall_rate` per ms, that no other context
  fills (as a timer interrupt or an ECC scrub might cause); the fit must not take them for
  switches.
* Short kernels (shortk): a synchronous submitter beside one spinner. A submission waits for
  the spinner's running slice to end (slices run back to back from the spinner's last resume);
  then S_in = S passes (save the spinner + switch) plus a fetch latency, the kernel runs, and
  C_out passes (switch back to the spinner, no state to save) before the spinner resumes.
* All times are quantised to the %globaltimer tick. Host times use another clock (an offset).

Usage: synthetic.py OUTDIR [--timeslice-us 1024] [--switch-us 25] [--switch-out-us 10]
       [--jitter-us 5] [--nprocs 1,2,3] [--seed 1] [--tick-ns 32]
"""
import argparse
import csv
import os

import numpy as np

GAPS_HEADER = ["process_id", "block", "gap_start_ns", "gap_end_ns"]
META_HEADER = ["process_id", "role", "pid", "block", "kernel_start_ns", "kernel_end_ns", "reads",
               "changes", "min_delta_ns", "backwards", "gaps_seen", "gaps_logged", "grid_blocks",
               "threads", "threshold_ns", "sm_count", "clock_mhz"]
KERNELS_HEADER = ["process_id", "seq", "batch", "host_submit_ns", "host_done_ns", "gpu_start_ns",
                  "gpu_end_ns"]
GT0 = 1_763_000_000_000_000_000  # globaltimer values are ns since the epoch on Linux
HOST_OFFSET = -GT0 + 5_000_000_000_000  # host CLOCK_MONOTONIC = globaltimer + this


def _write(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def _q(t, tick):
    return int(t // tick * tick)


def _stall_split(runs, rng, stall_rate_per_ms):
    """Splits runs [(s, e)] at random stalls; returns (runs, stall gaps)."""
    out, stalls = [], []
    for s, e in runs:
        n = rng.poisson(stall_rate_per_ms * (e - s) / 1e6)
        cuts = np.sort(rng.uniform(s + 5_000, max(s + 5_001, e - 5_000), size=n))
        cur = s
        for c in cuts:
            length = rng.uniform(2_500, 4_000)
            if c <= cur or c + length >= e:
                continue
            out.append((cur, c))
            stalls.append((c, c + length))
            cur = c + length
        out.append((cur, e))
    return out, stalls


def timeslice_run(nproc, timeslice_ns, switch_ns, jitter_ns, duration_ns, seed=0,
                  stall_rate_per_ms=0.02, stagger_ns=40_000, tick=32, log_blocks=2,
                  grid_blocks=132, clock_mhz=1980):
    """Round-robin time-slicing of nproc spinners. Returns (gaps_rows, meta_rows)."""
    rng = np.random.default_rng(seed)
    arrive = [GT0 + p * stagger_ns for p in range(nproc)]
    start = [None] * nproc
    deadline = [None] * nproc
    done = [False] * nproc
    runs = [[] for _ in range(nproc)]

    def runnable(p, t):
        return arrive[p] <= t and not done[p]

    h, t = 0, float(arrive[0])
    while True:
        if start[h] is None:
            start[h] = t
            deadline[h] = t + duration_ns
        end = t + max(timeslice_ns + rng.normal(0, jitter_ns), timeslice_ns / 2)
        # No one else waiting at the slice end: the holder keeps the GPU for another slice.
        while end < deadline[h] and not any(runnable(q, end) for q in range(nproc) if q != h):
            end += max(timeslice_ns + rng.normal(0, jitter_ns), timeslice_ns / 2)
        if end >= deadline[h]:
            # The kernel ends at its first read past the deadline: at once if the deadline
            # passed while its context was switched out.
            end = max(deadline[h], t + 1_000)
            deadline[h] = end
            done[h] = True
        runs[h].append((t, end))
        nxt = None
        for k in range(1, nproc + 1):
            q = (h + k) % nproc
            if not done[q] and (q != h or not done[h]):
                nxt = q
                break
        if nxt is None:
            break
        sw = max(switch_ns + rng.normal(0, jitter_ns / 4), switch_ns / 2)
        t = max(end + sw, float(arrive[nxt]))
        h = nxt

    gaps_rows, meta_rows = [], []
    for p in range(nproc):
        pruns, stalls = _stall_split(runs[p], rng, stall_rate_per_ms)
        gaps = [(a[1], b[0]) for a, b in zip(pruns[:-1], pruns[1:])]
        for b in range(log_blocks):
            # Other blocks are stopped and resumed a little apart from block 0.
            off = 0.0 if b == 0 else rng.uniform(-500, 500)
            bg = [(_q(s + off, tick), _q(e + off, tick)) for s, e in gaps]
            for s, e in bg:
                gaps_rows.append([p, b, s, e])
            ks, ke = _q(start[p], tick), _q(deadline[p], tick)
            meta_rows.append([p, "spin", 1000 + p, b, ks, ke, (ke - ks) // 20, (ke - ks) // tick,
                              tick, 0, len(bg), len(bg), grid_blocks, 128, 2000, 132, clock_mhz])
    return gaps_rows, meta_rows


def shortk_run(neighbours, timeslice_ns, switch_ns, switch_out_ns, jitter_ns, duration_ns,
               kernel_ns=5_000, sleep_max_ns=5_000_000, fetch_ns=1_000, submit_ns=2_000,
               notify_ns=3_000, seed=0, tick=32):
    """A synchronous short-kernel submitter beside `neighbours` (0 or 1) spinners.
    Returns (gaps_rows, meta_rows, kernels_rows)."""
    rng = np.random.default_rng(seed)
    sid = neighbours  # the submitter's process id follows the spinners'

    def slice_len():
        return max(timeslice_ns + rng.normal(0, jitter_ns), timeslice_ns / 2)

    t = float(GT0 + 100_000_000)  # start delay
    t_end = t + duration_ns
    spin_start = float(GT0)
    resume, boundary = spin_start, spin_start + slice_len()
    gaps, kernels = [], []
    seq = 0
    while t < t_end:
        t += rng.uniform(0, sleep_max_ns)
        host_submit = t
        arrive = t + submit_ns
        if neighbours:
            while boundary < arrive:
                boundary += slice_len()
            gap_start = boundary
            k_start = gap_start + max(switch_ns + rng.normal(0, jitter_ns / 4), 0) + fetch_ns
            k_end = k_start + kernel_ns
            gap_end = k_end + max(switch_out_ns + rng.normal(0, jitter_ns / 4), 0)
            gaps.append((gap_start, gap_end))
            resume = gap_end
            boundary = resume + slice_len()
        else:
            k_start = arrive + fetch_ns + rng.uniform(0, 500)
            k_end = k_start + kernel_ns
        done = k_end + notify_ns + rng.uniform(0, 500)
        kernels.append([sid, seq, seq, int(host_submit) + HOST_OFFSET, int(done) + HOST_OFFSET,
                        _q(k_start, tick), _q(k_end, tick)])
        seq += 1
        t = done
    gaps_rows, meta_rows = [], []
    if neighbours:
        spin_end = t_end + 500_000_000
        for s, e in gaps:
            gaps_rows.append([0, 0, _q(s, tick), _q(e, tick)])
        meta_rows.append([0, "spin", 1000, 0, _q(spin_start, tick), _q(spin_end, tick), 0, 0, tick,
                          0, len(gaps), len(gaps), 132, 128, 2000, 132, 1980])
    return gaps_rows, meta_rows, kernels


def write_all(outdir, timeslice_us=1024.0, switch_us=25.0, switch_out_us=10.0, jitter_us=5.0,
              nprocs=(1, 2, 3), duration_ms=2000, seed=1, gpu="NVIDIA H200",
              driver="580.159.04", date="2026-11-20", launch_us=2.2, read_gbps=4100.0, tick=32):
    os.makedirs(outdir, exist_ok=True)
    T, S, C, J = (x * 1000.0 for x in (timeslice_us, switch_us, switch_out_us, jitter_us))
    for i, n in enumerate(nprocs):
        g, m = timeslice_run(n, T, S, J, duration_ms * 1e6, seed=seed + i, tick=tick)
        _write(os.path.join(outdir, f"ts_n{n}_gaps.csv"), GAPS_HEADER, g)
        _write(os.path.join(outdir, f"ts_n{n}_meta.csv"), META_HEADER, m)
    for label, nb in (("sk_ctrl", 0), ("sk_sync", 1)):
        g, m, k = shortk_run(nb, T, S, C, J, 3e9, seed=seed + 10 + nb, tick=tick)
        _write(os.path.join(outdir, f"{label}_gaps.csv"), GAPS_HEADER, g)
        _write(os.path.join(outdir, f"{label}_meta.csv"), META_HEADER, m)
        _write(os.path.join(outdir, f"{label}_kernels.csv"), KERNELS_HEADER, k)
    _write(os.path.join(outdir, "launch.csv"), ["metric", "param", "value", "unit"], [
        ["launch_stream_us", "n=20000x5", launch_us, "us"],
        ["launch_host_call_us", "n=20000x5", 1.9, "us"],
        ["launch_graph_us", "n=1000x10", 1.1, "us"],
        ["launch_sync_p50_us", "n=2000", 8.5, "us"],
        ["launch_sync_p99_us", "n=2000", 12.0, "us"],
        ["bw_read_GBps", "bytes=2147483648,reps=20", read_gbps, "GB/s"],
        ["bw_read_GBps_median", "bytes=2147483648,reps=20", read_gbps - 20, "GB/s"],
        ["bw_write_GBps", "bytes=2147483648,reps=20", 3900.0, "GB/s"],
        ["bw_copy_GBps", "bytes=2147483648,reps=20", 3950.0, "GB/s"],
    ])
    _write(os.path.join(outdir, "device.csv"), ["key", "value"], [
        ["name", gpu], ["compute_capability", "9.0"], ["sm_count", 132], ["compute_mode", 0],
        ["compute_preemption_supported", 1], ["cuda_driver_version", 13000],
        ["cuda_runtime_version", 13000]])
    with open(os.path.join(outdir, "nvidia-smi-q.txt"), "w") as f:
        f.write("==============NVSMI LOG==============\n\n"
                f"Driver Version                            : {driver}\n"
                "CUDA Version                              : 13.0\n\n"
                "Attached GPUs                             : 1\n"
                "GPU 00000000:00:07.0\n"
                f"    Product Name                          : {gpu}\n"
                "    Compute Mode                          : Default\n")
    _write(os.path.join(outdir, "run-info.csv"), ["key", "value"],
           [["date_utc", f"{date}T12:00:00Z"], ["quick", 0]])
    with open(os.path.join(outdir, "nvcc-version.txt"), "w") as f:
        f.write("Cuda compilation tools, release 13.0, V13.0.88\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--timeslice-us", type=float, default=1024.0)
    ap.add_argument("--switch-us", type=float, default=25.0)
    ap.add_argument("--switch-out-us", type=float, default=10.0)
    ap.add_argument("--jitter-us", type=float, default=5.0)
    ap.add_argument("--nprocs", default="1,2,3")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tick-ns", type=int, default=32, help="%%globaltimer granularity")
    a = ap.parse_args()
    write_all(a.outdir, a.timeslice_us, a.switch_us, a.switch_out_us, a.jitter_us,
              tuple(int(x) for x in a.nprocs.split(",")), seed=a.seed, tick=a.tick_ns)


if __name__ == "__main__":
    main()
