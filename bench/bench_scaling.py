#!/usr/bin/env python3
"""Scaling benchmark (issue 12 item 2): cost per kernel as sharing grows, and growth exponents.

Cases, each at sizes N measured in the same run (ratios against N = 1 of the same case):
  mps    N always-busy MPS clients on one H100 (replicas: N, so each client is capped at
         floor(100/N) % of the SMs and all of them co-run; HBM shared max-min)
  ts     N always-busy time-sliced tenants on one H100 (replicas: N, profile timings)
  gpus   N H100s, each exclusive with one always-busy tenant
  setup  N H100s with one tenant each and almost no simulated time (20 ms): the whole process
         is setup (load, resolve, Run construction), the summary, the text table and the HDF5
         file (`gpumux run FILE -o OUT.h5`; the kernel count from a --json run of the same file); its per-size cost shows any super-linear term outside the run loop.
Every busy tenant is a closed loop (concurrency 1, no think time) of requests of KPR kernels
(lognormal 100 us, full grid, memory_bound 0.5). The simulated duration of each run is chosen
from a short pilot run so that the run completes about BASE x N kernels: the work grows
linearly with N, so a linear simulator's total time grows with exponent 1.

Columns:
  kernels      completed kernels (completed requests x KPR, from the --json summary)
  sim ns/k     the summary's wall_s (run loop + summary, as the runner measures it) / kernels
  ratio        sim ns/k over N = 1's (target: <= 2 at the largest N)
  proc ns/k    the whole process (`gpumux run FILE -o OUT.h5 --json`) / kernels
Below each case: the growth exponent of each column's total time (least-squares slope of
log(time) vs log(N); 1 = linear, 2 = quadratic).

Timings: min of --repeat runs of each point (the development machine is a shared 2-core VM).
With --instructions: instead, callgrind's instruction count per kernel of the run loop at the
smallest and largest N of each case (load-independent; cache misses are not in it).

usage: /usr/bin/python3 bench/bench_scaling.py [--gpumux build/gpumux] [--base 20000]
                                                [--repeat 3] [--cases mps,ts,gpus,setup]
                                                [--quick]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

KPR = 4  # kernels per request
KERNEL = ("{name: k, duration: {lognormal: {median: 100us, sigma: 0.5}}, sm_fraction: 1.0, "
          "memory_bound: 0.5, repeat: %d}" % KPR)


def tenant_yaml(name, device):
    return f"""  - name: {name}
    device: {device}
    memory: 1GiB
    workload:
      arrivals: {{process: closed, concurrency: 1, think: 0ms}}
      request:
        kernels:
          - {KERNEL}
"""


def scenario(case, n, duration_s):
    head = f"name: {case}-{n}\nseed: 5\nduration: {duration_s:.6f}s\noutput: {{sample: 1s}}\n"
    if case in ("mps", "ts"):
        mode = "mps" if case == "mps" else "time-slicing"
        gpus = ("gpus:\n  - name: gpu0\n    model: h100-sxm-80gb\n"
                f"    sharing: {{mode: {mode}, replicas: {n}}}\n")
        tenants = "".join(tenant_yaml(f"t{i}", "gpu0") for i in range(n))
    else:
        gpus = "gpus:\n" + "".join(
            f"  - name: gpu{i}\n    model: h100-sxm-80gb\n    sharing: {{mode: exclusive}}\n"
            for i in range(n))
        tenants = "".join(tenant_yaml(f"t{i}", f"gpu{i}") for i in range(n))
    return head + gpus + "tenants:\n" + tenants


def run_once(binary, path, out_dir, with_output, table=False):
    """Runs gpumux; returns (process wall s, summary dict, or None with the text table)."""
    cmd = [binary, "run", path] + ([] if table else ["--json"])
    if with_output:
        cmd += ["-o", os.path.join(out_dir, "out.h5")]
    start = time.perf_counter()
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    return wall, None if table else json.loads(proc.stdout)


def kernels_of(summary):
    return sum(t["completed"] for t in summary["tenants"].values()) * KPR


def slope(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den > 0 else float("nan")


def measure_case(args, case, sizes, tmp):
    rows = []
    for n in sizes:
        path = os.path.join(tmp, f"{case}-{n}.yaml")
        if case == "setup":
            duration = 0.02
        else:
            # Pilot: simulated kernels per second at this size, then the duration for BASE x N.
            pilot_s = 0.05
            with open(path, "w") as f:
                f.write(scenario(case, n, pilot_s))
            _, s = run_once(args.gpumux, path, tmp, False)
            per_s = max(kernels_of(s), 1) / pilot_s
            duration = args.base * n / per_s
        with open(path, "w") as f:
            f.write(scenario(case, n, duration))
        sim_best = proc_best = float("inf")
        kernels = 0
        for _ in range(args.repeat):
            proc_wall, s = run_once(args.gpumux, path, tmp, True)
            kernels = kernels_of(s)
            sim_best = min(sim_best, s["wall_s"])
            if case == "setup":  # the text table's process instead of --json's
                proc_wall, _ = run_once(args.gpumux, path, tmp, True, table=True)
            proc_best = min(proc_best, proc_wall)
        rows.append((n, kernels, sim_best, proc_best))
        print(f"  {case} N={n}: {kernels} kernels, sim {sim_best:.3f} s, process {proc_best:.3f} s",
              file=sys.stderr, flush=True)
    return rows


def report(case, rows):
    n1, k1, s1, p1 = rows[0]
    base_sim = s1 / max(k1, 1) * 1e9
    base_proc = p1 / max(k1, 1) * 1e9
    if case == "setup":
        print(f"\n{case}: N GPUs x 1 tenant, 20 ms simulated; the whole process per GPU")
        print(f"{'N':>6} {'kernels':>9} {'sim s':>8} {'proc s':>8} {'proc ms/GPU':>12} {'ratio':>6}")
        for n, k, s, p in rows:
            print(f"{n:6d} {k:9d} {s:8.3f} {p:8.3f} {p / n * 1e3:12.3f} "
                  f"{(p / n) / (p1 / n1):6.2f}")
    else:
        print(f"\n{case}:")
        print(f"{'N':>6} {'kernels':>9} {'sim ns/k':>9} {'ratio':>6} {'proc ns/k':>10} {'ratio':>6}")
        for n, k, s, p in rows:
            sk, pk = s / max(k, 1) * 1e9, p / max(k, 1) * 1e9
            print(f"{n:6d} {k:9d} {sk:9.1f} {sk / base_sim:6.2f} {pk:10.1f} {pk / base_proc:6.2f}")
    ns = [r[0] for r in rows]
    print(f"growth exponent (log-log slope of total time vs N): sim {slope(ns, [r[2] for r in rows]):.2f}, "
          f"process {slope(ns, [r[3] for r in rows]):.2f}"
          + ("" if case == "setup" else
             f"; kernels {slope(ns, [max(r[1], 1) for r in rows]):.2f}"))
    last = rows[-1]
    if case != "setup":
        ratio = (last[2] / max(last[1], 1)) / (s1 / max(k1, 1))
        print(f"ns/kernel at N={n1}: {base_sim:.0f}, at N={last[0]}: "
              f"{last[2] / max(last[1], 1) * 1e9:.0f}, ratio {ratio:.2f} "
              f"({'ok' if ratio <= 2 else 'ABOVE'} target <= 2)")


def instructions(binary, path):
    """Instructions the whole process executes (valgrind's callgrind), and its summary."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                               binary, "run", path, "--json"], check=True, capture_output=True,
                              text=True)
        with open(out) as f:
            total = next(int(line.split()[1]) for line in f if line.startswith("totals:"))
    return total, json.loads(proc.stdout)


def measure_instructions(args, case, sizes, tmp):
    """Instructions per kernel of the run loop at each size: (I(D) - I(0)) / kernels, where
    I(D) runs about --instr-kernels kernels and I(0) the same scenario for 0.1 ms (start-up,
    summary and output cancel). Immune to the shared machine's load."""
    rows = []
    for n in sizes:
        path = os.path.join(tmp, f"{case}-{n}-ir.yaml")
        with open(path, "w") as f:
            f.write(scenario(case, n, 0.05))
        _, s = run_once(args.gpumux, path, tmp, False)
        duration = args.instr_kernels / (max(kernels_of(s), 1) / 0.05)
        with open(path, "w") as f:
            f.write(scenario(case, n, duration))
        full, s_full = instructions(args.gpumux, path)
        with open(path, "w") as f:
            f.write(scenario(case, n, 1e-4))
        empty, s_empty = instructions(args.gpumux, path)
        kernels = kernels_of(s_full) - kernels_of(s_empty)
        rows.append((n, kernels, (full - empty) / max(kernels, 1)))
    print(f"\n{case}, instructions per kernel (callgrind):")
    for n, k, per in rows:
        print(f"  N={n:4d}: {per:8.0f} instructions/kernel ({k} kernels), "
              f"ratio {per / rows[0][2]:.2f}")
    sys.stdout.flush()


SIZES = {
    "mps": [1, 2, 4, 8, 16, 32, 48],
    "ts": [1, 2, 4, 8, 16, 32, 64],
    "gpus": [1, 4, 16, 64, 256, 512],
    "setup": [64, 256, 1024, 4096],
}
QUICK = {
    "mps": [1, 8, 48],
    "ts": [1, 8, 64],
    "gpus": [1, 64, 512],
    "setup": [64, 1024],
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpumux", default="build/gpumux")
    parser.add_argument("--base", type=int, default=20000, help="kernels per unit of N")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default="mps,ts,gpus,setup")
    parser.add_argument("--quick", action="store_true", help="three sizes per case")
    parser.add_argument("--instructions", action="store_true",
                        help="instead of timings: callgrind instructions per kernel at the "
                             "smallest and largest N of mps, ts and gpus (needs valgrind)")
    parser.add_argument("--instr-kernels", type=int, default=20000)
    args = parser.parse_args()
    sizes = QUICK if args.quick else SIZES
    print(f"gpumux {args.gpumux}; {KPR} kernels per request; about {args.base} x N kernels per "
          f"run; min of {args.repeat} runs")
    with tempfile.TemporaryDirectory() as tmp:
        if args.instructions:
            for case in args.cases.split(","):
                if case != "setup":
                    measure_instructions(args, case, [SIZES[case][0], SIZES[case][-1]], tmp)
            return 0
        for case in args.cases.split(","):
            rows = measure_case(args, case, sizes[case], tmp)
            report(case, rows)
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
