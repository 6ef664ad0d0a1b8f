#!/usr/bin/env python3
"""Peak memory and HDF5 write cost of `gpumux run` and `gpumux compare` against the run's length
(issue 12, items 3-4).

    /usr/bin/python3 bench/bench_memory.py            # 1 min, 10 min, 1 h simulated (~2 min)
    /usr/bin/python3 bench/bench_memory.py --long     # ... 6 h and 24 h (86M requests; ~45 min)
    /usr/bin/python3 bench/bench_memory.py --scenario scenarios/mps-h100.yaml --lengths 60,600
    /usr/bin/python3 bench/bench_memory.py --case compare   # only `compare`
    GPUMUX_BIN=/path/to/other/gpumux /usr/bin/python3 bench/bench_memory.py   # another build
    /usr/bin/python3 bench/bench_memory.py --trace    # arrival traces of 1e5, 1e6, 1e7 rows
    /usr/bin/python3 bench/bench_memory.py --trace --rows 1e5,1e6 --before OLD/build/gpumux

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

--trace: the same service replaying a request-arrival trace (`arrivals: {process: trace}`, a
csv of Poisson arrivals at 1000/s with token columns, written to a temporary directory) of each
--rows length, against the same service with Poisson arrivals (the same number of requests) in
the same session: `trace extra` (RSS with the trace - RSS without) is what reading the trace
costs in memory, flat in its length since traces are read as a stream (issue 12 item 3).
--before BIN adds the same trace runs with another gpumux binary (e.g. one built before).
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


TRACE_SCENARIO = """\
name: bench-memory-trace
seed: 1
duration: {duration}s
gpus: [{{name: gpu0, model: h100-sxm-80gb}}]
tenants:
  - name: service
    device: gpu0
    workload:
      arrivals: {arrivals}
      request: {{kernels: [{{name: k, duration: 200us}}]}}
"""


def write_trace(path, rows, rate=1000.0):
    """A csv trace of `rows` Poisson arrivals at `rate`/s with token columns (seeded)."""
    import random
    rng = random.Random(rows)
    t = 0.0
    with open(path, "w") as f:
        f.write("arrival_s,input_tokens,output_tokens\n")
        chunk = []
        for i in range(rows):
            t += rng.expovariate(rate)
            chunk.append(f"{t:.9f},{100 + i % 900},{1 + i % 300}\n")
            if len(chunk) == 65536:
                f.write("".join(chunk))
                chunk.clear()
        f.write("".join(chunk))
    return t


def run_plain(binary, scenario):
    """(wall s, peak RSS bytes) of one `gpumux run --quiet`."""
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "run", scenario, "--quiet"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{binary} run failed: {err}")
    return wall, usage.ru_maxrss * 1024


def trace_main(args):
    rows_list = [int(float(x)) for x in args.rows.split(",")]
    with tempfile.TemporaryDirectory(prefix="gpumux-bench-trace-") as tmp:
        print(f"gpumux run replaying an arrival trace vs the same Poisson service, peak RSS by "
              f"trace length (1000 requests/s, one 200 us kernel, one H100); {os.cpu_count()} "
              f"CPUs, load average {os.getloadavg()[0]:.1f}")
        header = (f"{'rows':>10} {'file':>8} | {'RSS poisson':>11} {'RSS trace':>10} "
                  f"{'trace extra':>11} | {'wall poisson':>12} {'wall trace':>10}"
                  + (f" | {'RSS before':>10} {'extra before':>12} {'wall before':>11}"
                     if args.before else ""))
        print(header)
        print("-" * len(header))
        extras, sizes = [], []
        for rows in rows_list:
            trace = os.path.join(tmp, "trace.csv")
            last = write_trace(trace, rows)
            duration = math.ceil(last) + 1
            with_trace = os.path.join(tmp, "trace.yaml")
            Path(with_trace).write_text(TRACE_SCENARIO.format(
                duration=duration, arrivals="{process: trace, file: trace.csv, format: csv}"))
            poisson = os.path.join(tmp, "poisson.yaml")
            Path(poisson).write_text(TRACE_SCENARIO.format(
                duration=duration, arrivals="{process: poisson, rate: 1000/s}"))
            repeat = args.repeat if rows < 5_000_000 else 1
            plain, traced, before = [], [], []
            for _ in range(max(1, repeat)):
                plain.append(run_plain(GPUMUX, poisson))
                traced.append(run_plain(GPUMUX, with_trace))
                if args.before:
                    before.append(run_plain(args.before, with_trace))
            rss_p = min(p[1] for p in plain)
            rss_t = min(p[1] for p in traced)
            extras.append(rss_t - rss_p)
            sizes.append(rows)
            line = (f"{rows:>10,} {os.path.getsize(trace) / 2**20:>6.1f}MB | "
                    f"{rss_p / 2**20:>9.1f}MB {rss_t / 2**20:>8.1f}MB "
                    f"{(rss_t - rss_p) / 2**20:>9.1f}MB | {min(p[0] for p in plain):>11.2f}s "
                    f"{min(p[0] for p in traced):>9.2f}s")
            if args.before:
                rss_b = min(p[1] for p in before)
                line += (f" | {rss_b / 2**20:>8.1f}MB {(rss_b - rss_p) / 2**20:>10.1f}MB "
                         f"{min(p[0] for p in before):>10.2f}s")
            print(line, flush=True)
        print(f"what the trace adds to peak RSS ranges {min(extras) / 2**20:.1f}.."
              f"{max(extras) / 2**20:.1f} MB from {sizes[0]:,} to {sizes[-1]:,} rows")


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
    parser.add_argument("--trace", action="store_true", help="peak RSS against the length of "
                        "an arrival trace instead of the run's length")
    parser.add_argument("--rows", default="1e5,1e6,1e7", help="--trace: comma-separated trace "
                        "lengths in rows (default 1e5,1e6,1e7)")
    parser.add_argument("--before", help="--trace: another gpumux binary to measure alongside")
    args = parser.parse_args()
    if args.trace:
        trace_main(args)
        return
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
