#!/usr/bin/python3
"""Fits the host time per operator of FasterTransformer's C++ ViT example (the `ft-vit`
harness: examples/cpp/vit/vit_example.cc and vit_int8_example.cc, v5.0 commit a44c381) to the
calibration set calibration/fit/ft-vit-host.csv, with leave-one-source-out cross-validation,
writes the value where calibration/validation/catalog_published.py reads it
(calibration/fit/ft-vit-host.yaml) and its report (calibration/fit/FT-VIT-HOST.md).

The law (models/workload/host_time.hpp, models/run/launch.cpp): the example's host thread
issues kernel k no earlier than k x g after the request starts, g = N_ops x t / K the host gap
per launch (N_ops the catalog's operators of one request, K its kernels), and the GPU runs each
kernel once issued and the previous one has finished; so a request takes about
max(GPU time, K x g). t is the one free parameter: the CPU time of the example's host thread per
operator, on the guide's host (Intel Xeon Gold 6132, 2.6 GHz). What it is spent on (no source
times it): every FP16 GEMM goes through cublasMMWrapper::Gemm (src/fastertransformer/utils/
cublasMMWrapper.cc at a44c381, lines 161-271), which per call takes a mutex, looks the shape up
in the algo map (line 171), creates three cuBLASLt matrix layouts and a matmul descriptor
(212-218), calls cublasLtMatmul with algo NULL, i.e. cuBLASLt's own heuristic, whenever the
tuned algorithm needs workspace, which the example never gives (line 226: workspaceSize 0 with
its null allocator; line 263), and destroys the four descriptors (268-271); every other kernel
is one <<<>>> launch. At batch 1 the guide's FP16 and INT8 take the same time (the GPU work is
hidden behind that host time), so the set is the guide's batch-1 rows of ViT-L/16, FP16 and
INT8, one fold each: each predicts the other (ViT-B/16's rows stay validation points).

Each point is its catalog request alone as catalog_published.py runs an `ft-vit` point
(SOURCE_REQUEST: no per-request host time, no copies, no cuBLASLt workspace; closed loop, one in
flight) with `host: {per_op: t}` stated, t scanned on a grid from 0; t minimises the mean
squared relative error (ties: the smallest t). `--check` refits and fails (exit 1) unless the
fit equals the committed calibration/fit/ft-vit-host.yaml and its out-of-sample error is within
5 points of its in-sample error.

    /usr/bin/python3 calibration/fit/ft_vit_host.py [--gpumux build/gpumux] [--step-us 0.05]
        [--max-us 12] [--check]
Cost: (max / step + 1) x 2 runs of 2 simulated seconds, about 1 minute at the defaults.
"""
from __future__ import annotations

import argparse
import copy
import csv
import datetime
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from fit_points import latency_points

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "calibration" / "fit" / "ft-vit-host.csv"
VALUE = ROOT / "calibration" / "fit" / "ft-vit-host.yaml"
REPORT = ROOT / "calibration" / "fit" / "FT-VIT-HOST.md"
# The validation rows the fitted value is judged on (never fitted here).
VALIDATION = ROOT / "calibration" / "validation" / "data" / "published" / "solo.csv"
# What the C++ example fixes in each request (catalog_published.py SOURCE_REQUEST["ft-vit"],
# less the fitted per_op), repeated here so this script does not read the value it writes.
EXAMPLE_REQUEST = {"host": {"per_request": "0ns", "input_bytes": "0B", "output_bytes": "0B"},
                   "gemm_workspace": False}


def workload(point: dict, per_op_us: float | None) -> dict:
    spec = {"model": point["model"], "batch": int(point["batch"]), "phase": "inference",
            "dtype": point["dtype"], "runtime": point["runtime"]}
    spec.update(copy.deepcopy(EXAMPLE_REQUEST))
    if per_op_us is not None:
        spec["host"]["per_op"] = f"{round(per_op_us * 1e3)}ns"
    spec["arrivals"] = {"process": "closed", "concurrency": 1, "think": "1ms"}
    return spec


def predict_ms(gpumux: str, point: dict, per_op_us: float | None, tmp: Path) -> float:
    """The point's mean latency alone (ms) with t = per_op_us stated (None: the runtime's)."""
    scen = {"name": "ft-vit-fit", "seed": 1, "duration": "2s", "warmup": "0s",
            "gpus": [{"name": "gpu0", "model": point["profile"],
                      "sharing": {"mode": "exclusive"}}],
            "tenants": [{"name": "t", "device": "gpu0", "workload": workload(point, per_op_us)}]}
    path = tmp / f"{point['id']}.yaml"
    path.write_text(yaml.safe_dump(scen, sort_keys=False))
    out = subprocess.run([gpumux, "run", str(path), "--json", "-q"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise SystemExit(f"ft_vit_host.py: {point['id']}: gpumux: "
                         + (out.stderr.strip().splitlines() or ["?"])[-1])
    return json.loads(out.stdout)["tenants"]["t"]["latency_ns"]["mean"] / 1e6


def loss(pred: dict, rows: list) -> float:
    return statistics.fmean(((pred[r["id"]] - r["target_ms"]) / r["target_ms"]) ** 2 for r in rows)


def best(table: dict, rows: list) -> float:
    return min(table, key=lambda t: (loss(table[t], rows), t))


def validation_rows() -> list:
    rows = [r for r in csv.DictReader(VALIDATION.open()) if r["source"] == "ft-vit"]
    for r in rows:
        r.update(model=r["workload"], dtype="fp16", runtime="fastertransformer",
                 profile=r["profile"], target_ms=float(r["value"]))
    return rows


def fit(gpumux: str, step_us: float, max_us: float, data: Path = DATA,
        validate: bool = True) -> dict:
    """The scan, the fit, its folds and (with `validate`) the validation rows at t = 0 and t."""
    rows = latency_points(data, "fastertransformer")
    last = math.floor(max_us / step_us + 1e-9)
    grid = [round(i * step_us, 4) for i in range(0, last + 1)]
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        table = {t: {r["id"]: predict_ms(gpumux, r, t, tmp) for r in rows} for t in grid}
        fitted = best(table, rows)
        folds = sorted({r["source"] for r in rows})
        fold = {s: best(table, [r for r in rows if r["source"] != s]) for s in folds}
        valid = validation_rows() if validate else []
        before = {r["id"]: predict_ms(gpumux, r, 0.0, tmp) for r in valid}
        after = {r["id"]: predict_ms(gpumux, r, fitted, tmp) for r in valid}
    err = {"in": [], "out": [], "zero": []}
    for r in rows:
        err["in"].append(abs(table[fitted][r["id"]] / r["target_ms"] - 1))
        err["out"].append(abs(table[fold[r["source"]]][r["id"]] / r["target_ms"] - 1))
        err["zero"].append(abs(table[grid[0]][r["id"]] / r["target_ms"] - 1))
    return {"rows": rows, "grid": grid, "table": table, "fitted": fitted, "fold": fold,
            "valid": valid, "before": before, "after": after,
            "in": statistics.median(err["in"]), "out": statistics.median(err["out"]),
            "zero": statistics.median(err["zero"])}


def host_gap_us(gpumux: str, point: dict, per_op_us: float) -> float:
    """The host gap per launch `gpumux inspect` reports for the point at t = per_op_us."""
    with tempfile.TemporaryDirectory() as td:
        path = Path(td) / "i.yaml"
        scen = {"name": "ft-vit-gap", "seed": 1, "duration": "1s",
                "gpus": [{"name": "gpu0", "model": point["profile"],
                          "sharing": {"mode": "exclusive"}}],
                "tenants": [{"name": "t", "device": "gpu0",
                             "workload": workload(point, per_op_us)}]}
        path.write_text(yaml.safe_dump(scen, sort_keys=False))
        out = subprocess.run([gpumux, "inspect", str(path)], capture_output=True, text=True,
                             check=True).stdout
    for word in out.split("host gap ")[1:]:
        value, unit = word.split()[:2]
        return float(value) * {"ns": 1e-3, "us": 1.0, "ms": 1e3}[unit]
    raise SystemExit("ft_vit_host.py: gpumux inspect printed no host gap")


def write(res: dict, gap_us: float, date: str, step_us: float, value: Path = VALUE,
          report: Path = REPORT) -> None:
    fitted, fold = res["fitted"], res["fold"]
    folds = ", ".join(f"without `{s}` {fold[s]:g} us" for s in sorted(fold))
    prov = (f"calibration/fit/ft_vit_host.py on calibration/fit/ft-vit-host.csv ({date}; "
            f"FasterTransformer docs/vit_guide.md, A100 40GB, ViT-L/16-224 batch 1, FP16 and "
            f"INT8, one fold each; folds {folds}; median |error| in sample "
            f"{100 * res['in']:.1f} %, out of sample {100 * res['out']:.1f} %; host gap "
            f"{gap_us:.2f} us per launch; calibration/fit/FT-VIT-HOST.md)")
    value.write_text(
        "# The host time per operator of FasterTransformer's C++ ViT example (the `ft-vit`\n"
        "# harness), written by calibration/fit/ft_vit_host.py; read by\n"
        "# calibration/validation/catalog_published.py SOURCE_REQUEST. Do not edit by hand.\n"
        + yaml.safe_dump({"per_op": f"{round(fitted * 1e3)}ns", "fitted": prov},
                         sort_keys=False, width=100))
    lines = ["# FasterTransformer's C++ ViT example: its host time per operator, the fit", "",
             "Generated by `calibration/fit/ft_vit_host.py` (the law in its docstring) from "
             "`calibration/fit/ft-vit-host.csv` (sources in SOURCE.md). One parameter, t = the "
             "`ft-vit` harness's `host: {per_op}`, scanned on a "
             f"{step_us} us grid from {res['grid'][0]} to {res['grid'][-1]} us; t minimises the "
             "mean squared relative error. Out of sample: each source's point predicted with t "
             "fitted on the other source alone.", "",
             f"**t = {fitted:g} us per operator, {gap_us:.2f} us per launch** (folds: {folds})",
             "",
             "| point | source | measured | t = 0 | in sample | out of sample |",
             "|---|---|---:|---:|---:|---:|"]
    for r in res["rows"]:
        m = r["target_ms"]
        z, i = res["table"][0.0][r["id"]], res["table"][fitted][r["id"]]
        o = res["table"][fold[r["source"]]][r["id"]]
        lines.append(f"| `{r['id']}` | `{r['source']}` | {m:g} ms | {z:.3f} ms "
                     f"({100 * (z / m - 1):+.1f} %) | {i:.3f} ms ({100 * (i / m - 1):+.1f} %) | "
                     f"{o:.3f} ms ({100 * (o / m - 1):+.1f} %) |")
    lines += ["", f"Median |error|: t = 0 {100 * res['zero']:.1f} %, in sample "
              f"{100 * res['in']:.1f} %, out of sample {100 * res['out']:.1f} %.", "",
              "Validation (solo.csv's `ft-vit` rows, ViT-B/16, never fitted), t = 0 -> fitted:",
              "", "| point | measured | t = 0 | fitted t |", "|---|---:|---:|---:|"]
    for r in res["valid"]:
        m, b, a = r["target_ms"], res["before"][r["id"]], res["after"][r["id"]]
        lines.append(f"| `{r['id']}` | {m:g} ms | {b:.3f} ms ({100 * (b / m - 1):+.1f} %) | "
                     f"{a:.3f} ms ({100 * (a / m - 1):+.1f} %) |")
    report.write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpumux", default=str(ROOT / "build" / "gpumux"))
    ap.add_argument("--step-us", type=float, default=0.05)
    ap.add_argument("--max-us", type=float, default=12.0)
    ap.add_argument("--date", default=datetime.datetime.now(datetime.timezone.utc)
                    .strftime("%Y-%m-%d"))
    ap.add_argument("--data", default=str(DATA), help="the calibration set (CSV)")
    ap.add_argument("--value", default=str(VALUE), help="where the fitted value is written")
    ap.add_argument("--report", default=str(REPORT))
    ap.add_argument("--no-validation", action="store_true",
                    help="skip the ViT-B/16 validation rows in the report (tests)")
    ap.add_argument("--check", action="store_true",
                    help="refit; fail unless it equals ft-vit-host.yaml and passes the 5-point rule")
    args = ap.parse_args(argv)
    for path in [args.data] + ([args.value] if args.check else []):
        if not Path(path).is_file():
            print(f"ft_vit_host.py: error: {path}: no such file", file=sys.stderr)
            return 2
    res = fit(args.gpumux, args.step_us, args.max_us, Path(args.data), not args.no_validation)
    summary = (f"t = {res['fitted']:g} us; folds "
               + ", ".join(f"{s}: {v:g}" for s, v in sorted(res["fold"].items()))
               + f"; median |error| in {100 * res['in']:.1f} %, out {100 * res['out']:.1f} %")
    print(summary)
    if args.check:
        committed = yaml.safe_load(Path(args.value).read_text())["per_op"]
        failed = []
        if committed != f"{round(res['fitted'] * 1e3)}ns":
            failed.append(f"ft-vit-host.yaml holds {committed}, the refit gives "
                          f"{round(res['fitted'] * 1e3)}ns: rerun calibration/fit/ft_vit_host.py")
        if res["out"] - res["in"] > 0.05:
            failed.append("out of sample more than 5 points above in sample")
        for f in failed:
            print(f"ft_vit_host.py: check failed: {f}", file=sys.stderr)
        return 1 if failed else 0
    write(res, host_gap_us(args.gpumux, res["rows"][0], res["fitted"]), args.date, args.step_us,
          Path(args.value), Path(args.report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
