#!/usr/bin/env python3
"""Scaling benchmark (issue 12 item 2): cost per kernel as sharing grows, and growth exponents.

Cases, each at sizes N measured in the same run (ratios against N = 1 of the same case):
  mps    N always-busy MPS clients on one H100 (replicas: N, so each client is capped at
         floor(100/N) % of the SMs and all of them co-run; HBM shared max-min)
  ts     N always-busy time-sliced tenants on one H100 (replicas: N, profile timings)
  gpus   N H100s, each exclusive with one always-busy tenant
  poisson  N H100s, each exclusive with one Poisson tenant (400 requests/s, one 1 ms kernel per
         request: issue 26's workload; at N = 1 the direct path, models/run/direct.cpp)
  setup  N H100s with one tenant each and almost no simulated time (20 ms): the whole process
         is setup (load, resolve, Run construction), the summary, the text table and the HDF5
         file (`gpumux run FILE -o OUT.h5`; the kernel count from a --json run of the same file); its per-size cost shows any super-linear term outside the run loop.
--match-kernels: poisson runs BASE x (largest N) kernels at every size instead (N = 1 simulated
512x as long as N = 512), so that N = 1's point is not a 20k-kernel run's start-up and noise.
Every busy tenant is a closed loop (concurrency 1, no think time) of requests of KPR kernels
(lognormal 100 us, full grid, memory_bound 0.5). The simulated duration of each run is chosen
from a short pilot run so that the run completes about BASE x N kernels: the work grows
linearly with N, so a linear simulator's total time grows with exponent 1.
Devices that share no tenant run as independent components, each with its own event queue, in
windows of simulated time (models/run/components.cpp); --one-queue adds a column with every
point run again under GPUMUX_PARTITION=0 (one queue for the whole run, the engine before that
change), in the same session.

Columns:
  kernels      completed kernels (completed requests x KPR, from the --json summary)
  sim ns/k     the summary's wall_s (run loop + summary, as the runner measures it) / kernels
  ratio        sim ns/k over N = 1's (target: <= 2 at the largest N)
  proc ns/k    the whole process (`gpumux run FILE -o OUT.h5 --json`; --no-output: without
               -o) / kernels
Below each case: the growth exponent of each column's total time (least-squares slope of
log(time) vs log(N); 1 = linear, 2 = quadratic).

Timings: min of --repeat runs of each point (the development machine is a shared 2-core VM).
With --instructions: instead, callgrind's instruction count per kernel of the run loop at the
smallest and largest N of each case (load-independent; cache misses are not in it).

usage: /usr/bin/python3 bench/bench_scaling.py [--gpumux build/gpumux] [--base 20000]
                                                [--repeat 3] [--cases mps,ts,gpus,poisson,setup]
                                                [--quick] [--one-queue] [--match-kernels]
                                                [--no-output]
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


POISSON_RATE = 400.0  # requests/s per GPU (issue 26)


def poisson_tenant_yaml(name, device):
    return f"""  - name: {name}
    device: {device}
    workload:
      arrivals: {{process: poisson, rate: {POISSON_RATE:g}/s}}
      request: {{kernels: [{{name: k, duration: 1ms}}]}}
"""


def kernels_per_request(case):
    return 1 if case == "poisson" else KPR


def scenario(case, n, duration_s):
    head = f"name: {case}-{n}\nseed: 5\nduration: {duration_s:.6f}s\noutput: {{sample: 1s}}\n"
    if case == "poisson":
        gpus = "gpus:\n" + "".join(
            f"  - name: gpu{i}\n    model: h100-sxm-80gb\n" for i in range(n))
        return head + gpus + "tenants:\n" + "".join(
            poisson_tenant_yaml(f"t{i}", f"gpu{i}") for i in range(n))
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


def run_once(binary, path, out_dir, with_output, table=False, one_queue=False):
    """Runs gpumux; returns (process wall s, summary dict, or None with the text table)."""
    cmd = [binary, "run", path] + ([] if table else ["--json"])
    if with_output:
        cmd += ["-o", os.path.join(out_dir, "out.h5")]
    env = dict(os.environ, GPUMUX_PARTITION="0") if one_queue else None
    start = time.perf_counter()
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    return wall, None if table else json.loads(proc.stdout)


def kernels_of(summary, case="gpus"):
    return sum(t["completed"] for t in summary["tenants"].values()) * kernels_per_request(case)


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
        elif case == "poisson" and args.match_kernels:
            # Every size runs the largest size's kernels: N = 1 for 512x as long as N = 512.
            duration = args.base * max(sizes) / (POISSON_RATE * n)
        elif case == "poisson":
            duration = args.base / POISSON_RATE  # BASE x N kernels: N GPUs at 400/s
        else:
            # Pilot: simulated kernels per second at this size, then the duration for BASE x N.
            pilot_s = 0.05
            with open(path, "w") as f:
                f.write(scenario(case, n, pilot_s))
            _, s = run_once(args.gpumux, path, tmp, False)
            per_s = max(kernels_of(s, case), 1) / pilot_s
            duration = args.base * n / per_s
        with open(path, "w") as f:
            f.write(scenario(case, n, duration))
        sim_best = proc_best = one_best = float("inf")
        kernels = 0
        for _ in range(args.repeat):
            proc_wall, s = run_once(args.gpumux, path, tmp, not args.no_output)
            kernels = kernels_of(s, case)
            sim_best = min(sim_best, s["wall_s"])
            if case == "setup":  # the text table's process instead of --json's
                proc_wall, _ = run_once(args.gpumux, path, tmp, True, table=True)
            proc_best = min(proc_best, proc_wall)
            if args.one_queue and case != "setup":  # alternating with the run above
                _, s1 = run_once(args.gpumux, path, tmp, not args.no_output, one_queue=True)
                if kernels_of(s1, case) != kernels:
                    raise SystemExit(f"{case} N={n}: one queue completed {kernels_of(s1, case)} "
                                     f"kernels, the components {kernels}")
                one_best = min(one_best, s1["wall_s"])
        rows.append((n, kernels, sim_best, proc_best, one_best))
        print(f"  {case} N={n}: {kernels} kernels, sim {sim_best:.3f} s, process {proc_best:.3f} s"
              + (f", one queue {one_best:.3f} s" if args.one_queue and case != "setup" else ""),
              file=sys.stderr, flush=True)
    return rows


def report(case, rows, one_queue=False):
    n1, k1, s1, p1, o1 = rows[0]
    base_sim = s1 / max(k1, 1) * 1e9
    base_proc = p1 / max(k1, 1) * 1e9
    if case == "setup":
        print(f"\n{case}: N GPUs x 1 tenant, 20 ms simulated; the whole process per GPU")
        print(f"{'N':>6} {'kernels':>9} {'sim s':>8} {'proc s':>8} {'proc ms/GPU':>12} {'ratio':>6}")
        for n, k, s, p, _ in rows:
            print(f"{n:6d} {k:9d} {s:8.3f} {p:8.3f} {p / n * 1e3:12.3f} "
                  f"{(p / n) / (p1 / n1):6.2f}")
    else:
        print(f"\n{case}:" + ("  (one queue: GPUMUX_PARTITION=0, ratio to the same N = 1)"
                              if one_queue else ""))
        print(f"{'N':>6} {'kernels':>9} {'sim ns/k':>9} {'ratio':>6} {'proc ns/k':>10} {'ratio':>6}"
              + (f" {'1-queue ns/k':>12} {'ratio':>6}" if one_queue else ""))
        for n, k, s, p, o in rows:
            sk, pk = s / max(k, 1) * 1e9, p / max(k, 1) * 1e9
            line = f"{n:6d} {k:9d} {sk:9.1f} {sk / base_sim:6.2f} {pk:10.1f} {pk / base_proc:6.2f}"
            if one_queue:
                ok = o / max(k, 1) * 1e9
                line += f" {ok:12.1f} {ok / base_sim:6.2f}"
            print(line)
    ns = [r[0] for r in rows]
    print(f"growth exponent (log-log slope of total time vs N): sim {slope(ns, [r[2] for r in rows]):.2f}, "
          f"process {slope(ns, [r[3] for r in rows]):.2f}"
          + ("" if case == "setup" else
             f"; kernels {slope(ns, [max(r[1], 1) for r in rows]):.2f}"))
    last = rows[-1]
    if case != "setup" and one_queue:
        print(f"one queue: ns/kernel at N={last[0]} {last[4] / max(last[1], 1) * 1e9:.0f}, "
              f"ratio {(last[4] / max(last[1], 1)) / (s1 / max(k1, 1)):.2f}")
    if case != "setup":
        ratio = (last[2] / max(last[1], 1)) / (s1 / max(k1, 1))
        print(f"ns/kernel at N={n1}: {base_sim:.0f}, at N={last[0]}: "
              f"{last[2] / max(last[1], 1) * 1e9:.0f}, ratio {ratio:.2f} "
              f"({'ok' if ratio <= 2 else 'ABOVE'} target <= 2)")


# The run loop: every event of every component (the windows, the merge of their records), not
# set-up, summary or output.
RUN_LOOP = "gpumux::run::Run::run_components()"


def instructions(binary, path, one_queue=False, toggle=None):
    """Instructions the whole process executes (valgrind's callgrind), or only inside the
    function TOGGLE, and its summary."""
    env = dict(os.environ, GPUMUX_PARTITION="0") if one_queue else None
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
                              + ([f"--toggle-collect={toggle}"] if toggle else [])
                              + [binary, "run", path, "--json"], check=True, capture_output=True,
                              text=True, env=env)
        with open(out) as f:
            total = next(int(line.split()[1]) for line in f if line.startswith("totals:"))
    return total, json.loads(proc.stdout)


def measure_instructions(args, case, sizes, tmp):
    """Instructions per kernel at each size: of the run loop alone (callgrind collecting only
    inside Run::run_components), and of the process less its start-up: (I(D) - I(0)) / kernels,
    where I(D) runs about --instr-kernels kernels and I(0) the same scenario for 0.1 ms (start-up
    and output cancel; the summary's per-tenant percentile pass does not, so this column grows
    with tenants x samples). Immune to the shared machine's load."""
    rows = []
    for n in sizes:
        path = os.path.join(tmp, f"{case}-{n}-ir.yaml")
        with open(path, "w") as f:
            f.write(scenario(case, n, 0.05))
        _, s = run_once(args.gpumux, path, tmp, False)
        duration = args.instr_kernels / (max(kernels_of(s, case), 1) / 0.05)
        with open(path, "w") as f:
            f.write(scenario(case, n, duration))
        empty_path = os.path.join(tmp, f"{case}-{n}-ir-empty.yaml")
        with open(empty_path, "w") as f:
            f.write(scenario(case, n, 1e-4))
        per = []
        for one_queue in ([False, True] if args.one_queue else [False]):
            loop, s_loop = instructions(args.gpumux, path, one_queue, RUN_LOOP)
            full, s_full = instructions(args.gpumux, path, one_queue)
            empty, s_empty = instructions(args.gpumux, empty_path, one_queue)
            kernels = kernels_of(s_full, case) - kernels_of(s_empty, case)
            per.append((loop / max(kernels_of(s_loop, case), 1), (full - empty) / max(kernels, 1)))
        rows.append((n, kernels, per))
    print(f"\n{case}, instructions per kernel (callgrind): run loop, process less start-up"
          + ("; components | one queue (GPUMUX_PARTITION=0)" if args.one_queue else "") + ":")
    for n, k, per in rows:
        print(f"  N={n:4d}: " + " | ".join(
            f"{lp:7.0f} ({lp / rows[0][2][0][0]:.2f}x), {pp:7.0f} ({pp / rows[0][2][0][1]:.2f}x)"
            for lp, pp in per) + f"  ({k} kernels)")
    sys.stdout.flush()


SIZES = {
    "mps": [1, 2, 4, 8, 16, 32, 48],
    "ts": [1, 2, 4, 8, 16, 32, 64],
    "gpus": [1, 2, 8, 64, 256, 512],
    "poisson": [1, 2, 8, 64, 512],
    "setup": [64, 256, 1024, 4096],
}
QUICK = {
    "mps": [1, 8, 48],
    "ts": [1, 8, 64],
    "gpus": [1, 2, 512],
    "poisson": [1, 2, 512],
    "setup": [64, 1024],
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpumux", default="build/gpumux")
    parser.add_argument("--base", type=int, default=20000, help="kernels per unit of N")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default="mps,ts,gpus,poisson,setup")
    parser.add_argument("--quick", action="store_true", help="three sizes per case")
    parser.add_argument("--match-kernels", action="store_true",
                        help="poisson: every size runs as many kernels as the largest (BASE x "
                             "its N), so that no size's ratio is a short run's start-up")
    parser.add_argument("--no-output", action="store_true",
                        help="run without -o (no HDF5 file: the run loop and the summary)")
    parser.add_argument("--one-queue", action="store_true",
                        help="also run every point with GPUMUX_PARTITION=0 (one event queue)")
    parser.add_argument("--instructions", action="store_true",
                        help="instead of timings: callgrind instructions per kernel at the "
                             "smallest and largest N of mps, ts and gpus (needs valgrind)")
    parser.add_argument("--instr-kernels", type=int, default=20000)
    parser.add_argument("--instr-sizes", default="",
                        help="sizes for --instructions, e.g. 1,2,512 (default: the case's "
                             "smallest and largest)")
    args = parser.parse_args()
    sizes = QUICK if args.quick else SIZES
    print(f"gpumux {args.gpumux}; {KPR} kernels per request; about {args.base} x N kernels per "
          f"run; min of {args.repeat} runs" + ("; no -o" if args.no_output else "; with -o"))
    with tempfile.TemporaryDirectory() as tmp:
        if args.instructions:
            for case in args.cases.split(","):
                if case != "setup":
                    sizes_ir = ([int(x) for x in args.instr_sizes.split(",")] if args.instr_sizes
                                else [SIZES[case][0], SIZES[case][-1]])
                    measure_instructions(args, case, sizes_ir, tmp)
            return 0
        for case in args.cases.split(","):
            rows = measure_case(args, case, sizes[case], tmp)
            report(case, rows, args.one_queue and case != "setup")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
