#!/usr/bin/env python3
"""The 1,024-GPU fleet (scenarios/cluster/fleet-1024.yaml, issue 26 item 3): wall time, time per
kernel launch and peak RSS of `gpumux run` at several simulated lengths, in one process and split
by node across worker processes (--workers), with and without -o, in one session.

For each length (`--set cluster.duration=...`) and worker count the script runs the scenario
and reads the process's wall time, CPU time (user + system, workers included: on a loaded machine
the fairer measure; on N idle cores the split's wall is about CPU / N) and peak RSS (the largest of the gpumux process and its worker
processes: the largest single process, not their sum); the kernel launches are the workload
pods' completed requests x 4 kernels x the GPUs of the pod, from the --json summary. It checks that every pod's numbers
(device, completed, p50, p99) are the same for every worker count at each length, so the split
is measured on equal work.

usage: /usr/bin/python3 bench/bench_fleet.py [--gpumux build/gpumux] [--lengths 10min,1h]
                                             [--workers 1,2] [--output] [--repeat 1]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = os.path.join(HERE, "..", "scenarios", "cluster", "fleet-1024.yaml")
KERNELS_PER_REQUEST = 4


def run(binary, length, workers, output_dir):
    cmd = [binary, "run", SCENARIO, "--json", "--set", f"cluster.duration={length}",
           "--workers", str(workers)]
    if output_dir:
        cmd += ["-o", os.path.join(output_dir, "fleet.h5")]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr}")
    # The largest resident set of the gpumux process and its workers (Linux: RUSAGE_CHILDREN's
    # maxrss is the largest of the waited-for descendants; this interpreter ran only this one).
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, json.loads(proc.stdout)


def pod_numbers(summary):
    return sorted(json.dumps(p, sort_keys=True) for p in summary.get("workload_pods", []))


def completed_requests(summary):
    return sum(p["completed"] for p in summary.get("workload_pods", []))


def launches_of(summary):
    """Kernel launches of the completed requests: 4 per request on each GPU of its pod."""
    return sum(p["completed"] * KERNELS_PER_REQUEST * (p["device"].count(",") + 1)
               for p in summary.get("workload_pods", []))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpumux", default="build/gpumux")
    parser.add_argument("--lengths", default="10min,1h")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--output", action="store_true", help="also run each point with -o")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",")]
    print(f"{'length':>8} {'workers':>7} {'-o':>3} {'requests':>12} {'launches':>13} "
          f"{'wall s':>9} {'ns/launch':>10} {'CPU s':>8} {'CPU ns/launch':>14} "
          f"{'peak RSS MB':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for length in args.lengths.split(","):
            reference = None
            for w in workers:
                for output in ([False, True] if args.output else [False]):
                    best = None
                    for _ in range(max(1, args.repeat)):
                        # A fresh interpreter per run so RUSAGE_CHILDREN is this run's alone.
                        res = subprocess.run(
                            [sys.executable, __file__, "--one", args.gpumux, length, str(w),
                             tmp if output else ""], check=True, capture_output=True, text=True)
                        one = json.loads(res.stdout)
                        if best is None or one[0] < best[0]:
                            best = one
                    wall, rss_kb, cpu, requests, launches, numbers = best
                    if reference is None:
                        reference = numbers
                    elif numbers != reference:
                        raise SystemExit(f"{length}: the pods' numbers differ with {w} workers")
                    print(f"{length:>8} {w:7d} {'yes' if output else 'no':>3} {requests:12d} "
                          f"{launches:13d} {wall:9.1f} {wall / max(launches, 1) * 1e9:10.1f} "
                          f"{cpu:8.1f} {cpu / max(launches, 1) * 1e9:14.1f} "
                          f"{rss_kb / 1024:12.1f}", flush=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        _, _, binary, length, w, out_dir = sys.argv
        wall, rss_kb, cpu, summary = run(binary, length, int(w), out_dir or None)
        print(json.dumps([wall, rss_kb, cpu, completed_requests(summary), launches_of(summary),
                          pod_numbers(summary)]))
        sys.exit(0)
    sys.exit(main())
