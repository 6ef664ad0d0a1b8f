#!/usr/bin/env python3
"""Fits the host CPU time an eager vLLM-v0 engine spends per kernel it dispatches
(`llm: {host_per_op: vllm-v0}`, models/workload/engine_cpu.hpp kVllmV0HostPerOp), and judges it.

Law (models/workload/llm_card.hpp): an eager engine's host dispatches every kernel of a step in
turn while the GPU runs the ones already queued, so each launch of n real kernels lasts
max(its GPU time, n x host_per_op). Where the host is the slower side, the time per output
token (TPOT) is the kernels' count x host_per_op (80 x 12 + 6 = 966 for Llama-2-70B), the same
at any tensor-parallel degree: Splitwise's measured TPOT is flat from TP 4 to TP 8 (A100:
45.0, 44.9 ms; H100: 29.7, 29.8 ms) while the weights' read per GPU halves.

The dispatch is single-thread host CPU work: on a host of relative speed s (the GPU profile's
`host_cpu:`, models/gpu/host_cpu.hpp: the DGX A100's EPYC 7742 is the reference, s = 1; the DGX
H100's Xeon 8480C s = 3.8/3.4 x 1.19 x 1.19 = 1.583 from its clock and core generation, sourced,
not fitted) each kernel costs host_per_op / s, so the fitted host_per_op is the reference
host's, and a fold fitted on one host predicts the other through the ratio of their speeds.

Calibration set: calibration/fit/llm/eager-dispatch.csv, Splitwise's Llama-2-70B TPOT at TP 8
(prompts 512 and 2048) on the DGX A100 and the DGX H100 (two folds: the two hosts). Every other
Splitwise point (TP 2 and 4, every TTFT: 20 points) stays a validation point of
calibration/validation/catalog_published.py. Each point is predicted by `gpumux run` (closed
loop, batch 1, 128 output tokens, the llm card with `engine_cpu: vllm-v0` and `host_per_op` at
the trial value), and host_per_op minimises the sum of squared log errors (golden section on
1-200 us). Cross-validation: leave one host out (the set has one source; its two hosts are the
folds, so each host's points are predicted by the other host's fit).

    /usr/bin/python3 calibration/fit/llm_eager_dispatch.py --gpumux build/gpumux
        [--report calibration/fit/LLM-DISPATCH.md] [--check models/workload/engine_cpu.hpp]

--check: exit 1 unless the header's kVllmV0HostPerOp is this fit's (whole ns, +-1).
"""
import argparse
import csv
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "calibration" / "fit" / "llm" / "eager-dispatch.csv"


def scenario(row, host_ns):
    """The closed-loop batch-1 scenario of one point, host_per_op = host_ns."""
    tp = int(re.search(r"tensor parallel (\d+)", row["note"]).group(1))
    workload = {"arrivals": {"process": "closed", "concurrency": 1, "think": "100ms"},
                "tokens": {"input": int(row["seq_len"]), "output": 128},
                "batching": {"max_batch": 1, "engine_cpu": "vllm-v0"},
                "llm": {"model": row["model"], "dtype": row["dtype"], "tp": tp,
                        "host_per_op": f"{host_ns}ns"}}
    return {"name": row["id"], "seed": 1, "duration": "60s", "warmup": "2s",
            "gpus": [{"name": f"gpu{i}", "model": row["profile"], "sharing": {"mode": "exclusive"}}
                     for i in range(tp)],
            "tenants": [{"name": "llm", "device": [f"gpu{i}" for i in range(tp)],
                         "workload": workload}]}


def host_speed(gpumux, row, cache):
    """The single-thread speed of the point's host (its profile's `host_cpu:`), as gpumux
    inspect reports it (models/gpu/host_cpu.hpp)."""
    key = ("speed", row["profile"])
    if key not in cache:
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            json.dump(scenario(row, 1000), f)
        proc = subprocess.run([gpumux, "inspect", f.name, "--format", "json"], capture_output=True,
                              text=True, timeout=120)
        Path(f.name).unlink()
        if proc.returncode != 0:
            sys.exit(f"gpumux inspect failed on {row['id']}: {proc.stderr.strip()}")
        cache[key] = json.loads(proc.stdout)["tenants"][0]["host_cpu"]["speed"]
    return cache[key]


def predict(gpumux, row, host_ns, cache):
    """gpumux's TPOT (ms) of `row` at host_per_op = host_ns (whole ns) on the reference host:
    the point's host dispatches each kernel in host_ns / its speed (written as the user's
    duration, whole ns, as `host_per_op: vllm-v0` does on that host)."""
    key = (row["profile"], row["seq_len"], row["note"], host_ns)
    if key not in cache:
        on_host = round(host_ns / host_speed(gpumux, row, cache))
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            json.dump(scenario(row, on_host), f)
        proc = subprocess.run([gpumux, "run", f.name, "--format", "json"], capture_output=True,
                              text=True, timeout=120)
        Path(f.name).unlink()
        if proc.returncode not in (0, 1):
            sys.exit(f"gpumux failed on {row['id']}: {proc.stderr.strip()}")
        cache[key] = json.loads(proc.stdout)["tenants"]["llm"]["tpot_ns"]["p50"] / 1e6
    return cache[key]


def fit(gpumux, rows, cache):
    """host_per_op (whole ns) minimising sum (log predicted / measured)^2 over rows."""
    def loss(h):
        return sum(math.log(predict(gpumux, r, h, cache) / float(r["value"])) ** 2 for r in rows)
    lo, hi = 1_000, 200_000
    g = (math.sqrt(5) - 1) / 2
    a, b = round(hi - g * (hi - lo)), round(lo + g * (hi - lo))
    while hi - lo > 2:
        if loss(a) <= loss(b):
            hi, b = b, a
            a = round(hi - g * (hi - lo))
        else:
            lo, a = a, b
            b = round(lo + g * (hi - lo))
    return min(range(lo, hi + 1), key=loss)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpumux", default=str(ROOT / "build" / "gpumux"))
    ap.add_argument("--report")
    ap.add_argument("--check")
    args = ap.parse_args()
    rows = list(csv.DictReader(DATA.open()))
    cache = {}
    host = fit(args.gpumux, rows, cache)
    folds = sorted({r["source"] for r in rows})
    lines = [
        "# Eager dispatch per kernel: the vllm-v0 host_per_op fit", "",
        "Generated by `calibration/fit/llm_eager_dispatch.py` (law and method in its docstring and",
        "models/workload/engine_cpu.hpp). Calibration set: `calibration/fit/llm/eager-dispatch.csv`",
        "(Splitwise, Llama-2-70B, TP 8, TPOT; calibration/fit/SOURCE.md). Folds: the two hosts.", "",
        f"Fitted host_per_op: **{host / 1000:.3f} us** per kernel on the reference host (DGX A100,",
        "host CPU speed 1; the DGX H100's host runs it at speed 1.583, models/gpu/host_cpu.hpp).", "",
        "| point | fold | measured (ms) | in sample (ms) | error | fit without the fold, reference host (us) | out of sample (ms) | error |",
        "|---|---|---:|---:|---:|---:|---:|---:|"]
    ins, outs = [], []
    held = {f: fit(args.gpumux, [r for r in rows if r["source"] != f], cache) for f in folds}
    for r in rows:
        m = float(r["value"])
        p_in = predict(args.gpumux, r, host, cache)
        h_out = held[r["source"]]
        p_out = predict(args.gpumux, r, h_out, cache)
        ins.append(abs(p_in / m - 1))
        outs.append(abs(p_out / m - 1))
        lines.append(f"| {r['id']} | {r['source']} | {m:.2f} | {p_in:.2f} | {100 * (p_in / m - 1):+.1f}% "
                     f"| {h_out / 1000:.3f} | {p_out:.2f} | {100 * (p_out / m - 1):+.1f}% |")
    lines += ["", f"Median |error|: {100 * statistics.median(ins):.1f} % in sample, "
              f"{100 * statistics.median(outs):.1f} % leaving one host out.", "",
              "Each host's own fit, in reference-host units, is the held-out column of the other's",
              f"rows: {held[folds[-1]] / 1000:.3f} us on the A100 host's points, "
              f"{held[folds[0]] / 1000:.3f} us on the H100 host's: the",
              "host CPU speeds (sourced from the two CPUs' clocks and core generations, not fitted)",
              "carry a fit from one DGX to the other. A host the profiles do not name is `generic`",
              "(speed 1): a user whose host differs writes `host: {cpu_speed: ...}` or measures",
              "`host_per_op: <measured>` (docs/llm-serving.md, docs/workloads.md \"Host CPU\")."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.report:
        Path(args.report).write_text(text)
    if args.check:
        header = Path(args.check).read_text()
        found = re.search(r"kVllmV0HostPerOp = ([\d']+);", header)
        if not found or abs(int(found.group(1).replace("'", "")) - host) > 1:
            sys.exit(f"{args.check}: kVllmV0HostPerOp is not this fit's {host} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
