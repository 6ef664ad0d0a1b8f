#!/usr/bin/env python3
"""Fits ONNX Runtime's device time per kernel, kernel-families.yaml
`runtimes.onnxruntime.kernel_fixed_cost` (models/workload/runtime_fixed_cost.hpp has the law),
to the calibration set calibration/fit/ort-latency.csv, with leave-one-source-out
cross-validation, and judges it.

The law: every kernel ONNX Runtime launches waits g = launch_overhead + kernel_fixed_cost
(profile) + F in its stream, holding its context but no SM. F is the one free parameter. Each
point is a catalog request alone (closed loop, one in flight, as `gpumux calibrate` runs it) on
its profile; its prediction at F is the mean latency gpumux gives. F minimises the mean squared
relative error over the points (a scan of F on a 0.25 us grid, then the best grid point); each
source's points are then predicted with F fitted on the other sources alone (out of sample;
with one source in the set, each batch size's points from the other batch sizes').

How F is set: each run states it as the tenant's `runtime_kernel_fixed_cost:` (docs/reference/
scenarios.md), which replaces the runtime's kernel_fixed_cost in the product's own law
(runtime_fixed_cost.hpp `runtime_kernel_fixed_ns`): the scan moves exactly the term the shipped
value sets, from 0 up, on any binary, with the profile named as the points name it. (Until
2026-12-07 the scan raised the profile's kernel_fixed_cost in copies of the profile instead. Not
the same term: a copy's file name is its profile's name, which selects the measured memory
latencies in kernel-families.yaml `memory_latency:`, so the copies ran on the `default` ones;
and the profile's term also prices a split-K reduction's launch in the GEMM choice
(catalog_timing.cpp `GemmChoice::time`), where the runtime's does not.) `--check` simulates
one point both ways, the shipped value built in and the same value stated, and fails unless they
agree to the nanosecond (a binary built before kernel-families.yaml changed fails it).

    /usr/bin/python3 calibration/fit/ort_kernel_cost.py [--gpumux build/gpumux]
        [--report calibration/fit/ORT-KERNEL.md] [--max-us 20] [--step-us 0.25] [--check]
"""
import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from fit_points import latency_points

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "calibration" / "fit" / "ort-latency.csv"
FAMILIES = ROOT / "calibration" / "workloads" / "kernel-families.yaml"


def ns_of(text) -> float:
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(ns|us|ms|s)\s*", str(text))
    if not m:
        raise SystemExit(f"not a duration: {text!r}")
    return float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]


def baked_us() -> float:
    doc = yaml.safe_load(FAMILIES.read_text())
    entry = doc["runtimes"]["onnxruntime"].get("kernel_fixed_cost")
    return ns_of(entry["value"]) / 1e3 if entry else 0.0


def predict_ms(gpumux: str, point: dict, f_us, tmp: Path) -> float:
    """The point's mean latency alone (ms) with F = f_us stated as the tenant's
    runtime_kernel_fixed_cost; f_us None = the value built into the binary."""
    workload = {"model": point["model"], "batch": int(point["batch"]), "phase": point["phase"],
                "dtype": point["dtype"], "runtime": point["runtime"],
                "arrivals": {"process": "closed", "concurrency": 1, "think": "1us"}}
    if point["seq_len"]:
        workload["seq_len"] = int(point["seq_len"])
    if f_us is not None:
        workload["runtime_kernel_fixed_cost"] = f"{round(f_us * 1e3)}ns"
    scen = {"name": "ort-fit", "seed": 1, "duration": "2s", "warmup": "0s",
            "gpus": [{"name": "gpu0", "model": point["profile"],
                      "sharing": {"mode": "exclusive"}}],
            "tenants": [{"name": "t", "device": "gpu0", "workload": workload}]}
    path = tmp / f"{point['id']}.yaml"
    path.write_text(yaml.safe_dump(scen, sort_keys=False))
    out = subprocess.run([gpumux, "run", str(path), "--json", "-q"], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)["tenants"]["t"]["latency_ns"]["mean"] / 1e6


def scan(gpumux: str, rows: list, grid: list, tmp: Path) -> dict:
    """{F: {id: predicted ms}} over the grid."""
    return {f_us: {r["id"]: predict_ms(gpumux, r, f_us, tmp) for r in rows} for f_us in grid}


def check(gpumux: str, rows: list, tmp: Path) -> int:
    """The first point with the built-in F and with the same F stated: equal, or exit 1."""
    point = rows[0]
    built_in = predict_ms(gpumux, point, None, tmp)
    stated = predict_ms(gpumux, point, baked_us(), tmp)
    print(f"{point['id']}: built in {built_in:.6f} ms, stated F = {baked_us():g} us "
          f"{stated:.6f} ms")
    if abs(built_in - stated) > 1e-6:
        print("the scanned term is not the shipped one", file=sys.stderr)
        return 1
    return 0


def loss(pred: dict, rows: list) -> float:
    return statistics.fmean(((pred[r["id"]] - r["target_ms"]) / r["target_ms"]) ** 2 for r in rows)


def best(table: dict, rows: list) -> float:
    return min(table, key=lambda f: (loss(table[f], rows), f))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpumux", default=str(ROOT / "build" / "gpumux"))
    ap.add_argument("--report", default=str(ROOT / "calibration" / "fit" / "ORT-KERNEL.md"))
    ap.add_argument("--max-us", type=float, default=20.0)
    ap.add_argument("--step-us", type=float, default=0.25)
    ap.add_argument("--check", action="store_true",
                    help="only check that a stated F is the built-in one (one point, two runs)")
    args = ap.parse_args(argv)
    rows = latency_points(DATA, "onnxruntime")
    if args.check:
        with tempfile.TemporaryDirectory() as td:
            return check(args.gpumux, rows, Path(td))
    # The grid is the multiples of the step from 0, so a rerun scans the same values.
    last = math.floor(args.max_us / args.step_us + 1e-9)
    grid = [round(i * args.step_us, 4) for i in range(0, last + 1)]
    with tempfile.TemporaryDirectory() as td:
        table = scan(args.gpumux, rows, grid, Path(td))
    fitted = best(table, rows)
    zero = min(table)
    # Folds: by source; with one source, by batch size (leave one batch size out).
    key = "source" if len({r["source"] for r in rows}) > 1 else "batch"
    folds = sorted({r[key] for r in rows}, key=lambda v: (len(v), v))
    fold = {v: best(table, [r for r in rows if r[key] != v]) for v in folds}
    lines = ["# ONNX Runtime's device time per kernel: the fit", "",
             "Generated by `calibration/fit/ort_kernel_cost.py` (models/workload/"
             "runtime_fixed_cost.hpp has the law) from `calibration/fit/ort-latency.csv` "
             "(sources in SOURCE.md). One parameter, F = `runtimes.onnxruntime.kernel_fixed_cost` "
             "(kernel-families.yaml), stated as each point's `runtime_kernel_fixed_cost:` and scanned on a "
             f"{args.step_us} us grid from {grid[0]} to {grid[-1]} us; F minimises the mean "
             "squared relative error. Out of sample: each fold's points predicted with F "
             f"fitted on the other folds alone (folds by {key}"
             + (": the set has one source" if key == "batch" else "") + ").", "",
             f"**F = {fitted:g} us** (folds: "
             + ", ".join(f"without {key} `{v}` {fold[v]:g} us" for v in folds) + ")", "",
             f"| point | source | measured | F = {zero:g} us | in sample | out of sample |",
             "|---|---|---:|---:|---:|---:|"]
    errors = {"before": [], "in": [], "out": []}
    for r in rows:
        t = r["target_ms"]
        b, i, o = (table[zero][r["id"]], table[fitted][r["id"]], table[fold[r[key]]][r["id"]])
        errors["before"].append(abs(b / t - 1))
        errors["in"].append(abs(i / t - 1))
        errors["out"].append(abs(o / t - 1))
        lines.append(f"| `{r['id']}` | `{r['source']}` | {t:.3g} ms | {b:.3g} ms ({100 * (b / t - 1):+.1f} %) "
                     f"| {i:.3g} ms ({100 * (i / t - 1):+.1f} %) | {o:.3g} ms ({100 * (o / t - 1):+.1f} %) |")
    lines += ["", f"Median |error| over {len(rows)} points: F = {zero:g} us "
              f"{100 * statistics.median(errors['before']):.1f} %, in sample "
              f"{100 * statistics.median(errors['in']):.1f} %, out of sample "
              f"{100 * statistics.median(errors['out']):.1f} %.", ""]
    Path(args.report).write_text("\n".join(lines))
    print(f"F = {fitted:g} us; folds " + ", ".join(f"{v}: {fold[v]:g}" for v in folds)
          + f"; median |error| in {100 * statistics.median(errors['in']):.1f} %, out "
          f"{100 * statistics.median(errors['out']):.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
