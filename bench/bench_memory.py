#!/usr/bin/env python3
"""Peak memory and HDF5 write cost of `gpumux run` and `gpumux compare` against the run's length
(issue 12, items 3-4).

    /usr/bin/python3 bench/bench_memory.py            # 1 min, 10 min, 1 h simulated (~2 min)
    /usr/bin/python3 bench/bench_memory.py --long     # ... 6 h and 24 h (86M requests; ~45 min)
    /usr/bin/python3 bench/bench_memory.py --scenario scenarios/mps-h100.yaml --lengths 60,600
    /usr/bin/python3 bench/bench_memory.py --case compare   # only `compare`
    GPUMUX_BIN=/path/to/other/gpumux /usr/bin/python3 bench/bench_memory.py   # another build

Runs a high-rate service (Poisson 1000 requests/s on one H100, one 200 us kernel each: 3.6M
requests per simulated hour) for each length, without and with `-o` (one process each, in the
same session, interleaved, min of --repeat), and prints per length: requests, peak RSS of the
process (wait4's ru_maxrss), wall and CPU time, the result file's bytes per request, and the
cost of writing it: (time with -o - time without) / time without, wall and CPU. Below the table:
the growth exponent of peak RSS in the run's length (least-squares slope of log RSS on log
length; 0 = flat, 1 = proportional).

The `compare` case runs the same scenario under `--strategies mps,time-slicing` (two runs one
after the other, one file with a group per strategy) and prints the same table.

Without -o the statistics keep exact percentile samples (16 B per measured request) up to
2^20 per series (`output.percentiles: auto`), then a bounded sketch; with -o the request
records are streamed to the file (models/output StreamedResultFile, StreamedCompareFile for
compare) and must not grow: the `-o extra` column (RSS with -o minus RSS without) is what
writing the file costs in memory, flat in the run's length.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GPUMUX = os.environ.get("GPUMUX_BIN") or str(REPO / "build" / "gpumux")

SCENARIO = """\
name: bench-memory
seed: 1
duration: 60s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: service
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 1000/s}
      request: {kernels: [{name: k, duration: 200us}]}
"""


COMPARE_STRATEGIES = "mps,time-slicing"


def run_once(scenario, seconds, out, case="run"):
    """(wall s, cpu s, peak RSS bytes) of one `gpumux run` (or `compare`), measured on that
    process alone."""
    args = [GPUMUX, case, scenario, "--set", f"duration={seconds}s"]
    args += ["--quiet"] if case == "run" else ["--strategies", COMPARE_STRATEGIES]
    if out:
        args += ["-o", out]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"gpumux run failed ({proc.returncode}): {err}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def requests_in(path):
    """Request rows of a run file, or of every strategy's group of a compare file."""
    import h5py  # only for counting rows of the file
    with h5py.File(path, "r") as f:
        if "strategies" in f:
            return sum(len(g["requests"]) for g in f["strategies"].values())
        return len(f["requests"])


def slope(xs, ys):
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else float("nan")


def human(seconds):
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--long", action="store_true", help="add 6 h and 24 h runs")
    parser.add_argument("--lengths", help="comma-separated simulated seconds (overrides the "
                        "defaults)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per point (min is kept; "
                        "default 3, 1 for runs of 6 h and more)")
    parser.add_argument("--scenario", help="a scenario file instead of the built-in high-rate "
                        "service (its duration is overridden)")
    parser.add_argument("--case", choices=["run", "compare", "both"], default="both",
                        help=f"gpumux run, gpumux compare --strategies {COMPARE_STRATEGIES}, or "
                        "both (default)")
    args = parser.parse_args()
    if args.lengths:
        lengths = [float(x) for x in args.lengths.split(",")]
    else:
        lengths = [60, 600, 3600] + ([6 * 3600, 24 * 3600] if args.long else [])

    with tempfile.TemporaryDirectory(prefix="gpumux-bench-memory-") as tmp:
        scenario = args.scenario
        if not scenario:
            scenario = os.path.join(tmp, "bench-memory.yaml")
            Path(scenario).write_text(SCENARIO)
        out = os.path.join(tmp, "out.h5")
        cases = ["run", "compare"] if args.case == "both" else [args.case]
        for case in cases:
            measure(case, scenario, out, lengths, args)


def measure(case, scenario, out, lengths, args):
    what = "gpumux run" if case == "run" else f"gpumux compare --strategies {COMPARE_STRATEGIES}"
    print(f"{what}: peak RSS and -o write cost by simulated length "
          f"({args.scenario or 'Poisson 1000/s, one 200 us kernel, one H100'}); "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; {GPUMUX}")
    header = (f"{'length':>8} {'requests':>11} | {'RSS':>9} {'RSS -o':>9} {'-o extra':>9} | "
              f"{'wall':>7} "
              f"{'wall -o':>7} {'cpu':>7} {'cpu -o':>7} | {'B/req':>5} "
              f"{'write/wall':>10} {'write/cpu':>9}")
    print(header)
    print("-" * len(header))
    rss, rss_o = [], []
    for seconds in lengths:
        repeat = args.repeat if seconds < 6 * 3600 else 1
        plain, streamed = [], []
        for _ in range(max(1, repeat)):
            plain.append(run_once(scenario, seconds, None, case))
            streamed.append(run_once(scenario, seconds, out, case))
        wall = min(p[0] for p in plain)
        cpu = min(p[1] for p in plain)
        wall_o = min(s[0] for s in streamed)
        cpu_o = min(s[1] for s in streamed)
        rss.append(min(p[2] for p in plain))
        rss_o.append(min(s[2] for s in streamed))
        requests = requests_in(out)
        size = os.path.getsize(out)
        print(f"{human(seconds):>8} {requests:>11,} | {rss[-1] / 2**20:>7.1f}MB "
              f"{rss_o[-1] / 2**20:>7.1f}MB {(rss_o[-1] - rss[-1]) / 2**20:>7.1f}MB | "
              f"{wall:>6.2f}s {wall_o:>6.2f}s {cpu:>6.2f}s "
              f"{cpu_o:>6.2f}s | {size / max(requests, 1):>5.1f} "
              f"{(wall_o - wall) / wall:>9.0%} {(cpu_o - cpu) / cpu:>9.0%}", flush=True)
    if len(lengths) >= 2:
        print(f"growth exponent of peak RSS in run length: without -o "
              f"{slope(lengths, rss):.2f}, with -o {slope(lengths, rss_o):.2f} "
              f"(0 = flat, 1 = proportional); what -o adds (RSS -o - RSS) ranges "
              f"{min(o - p for o, p in zip(rss_o, rss)) / 2**20:.1f}.."
              f"{max(o - p for o, p in zip(rss_o, rss)) / 2**20:.1f} MB")
    print()


if __name__ == "__main__":
    main()
