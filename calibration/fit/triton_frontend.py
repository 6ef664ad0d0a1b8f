#!/usr/bin/env python3
"""Fits the serving front ends of kernel-families.yaml `serving:` (`workload.serving:`;
models/workload/host_time.hpp has the law) to the calibration set
calibration/fit/triton-frontend.csv, with leave-one-source-out cross-validation, and judges it.

The law: a request served through a front end waits, beyond the backend's work,
    T_fe = L + (B_in + B_out) / W
(host time: it holds no GPU). L (seconds) and c = 1/W (seconds per byte) are the free
parameters of each front end; B_in + B_out is the request's payload as gpumux computes it.

Each point's front-end time is its measured client latency minus its backend time:
* where the source publishes the server's compute time of the same run (`backend_ms`, Triton's
  "Server Compute Infer"), that time: the front end is measured, not modelled;
* else gpumux's latency of the same request without a front end (closed loop, one in flight,
  the profiles' time-alone terms as shipped), as `gpumux calibrate` fits host_per_request.
The payload of a point is what the binary moves: the run with `serving:` and the front end set
to L = 0, W = 1 GB/s (host: front_end_latency, front_end_bandwidth) minus the run without, at
1 GB/s, is B_in + B_out in bytes. Its element type is the point's `io_dtype` column (the type
the model's serving signature takes, `workload.io_dtype:`; empty = the compute dtype): a TF-TRT
SavedModel keeps the fp32 signature of its FP32 source model around fp16 engines, so its images
travel as fp32, twice the bytes of the ONNX model exported from the fp16 PyTorch network. L and c minimise the mean squared relative error of the
point's total latency (weighted least squares, both >= 0; a front end whose points all move
the same payload, or none, fits L alone). Out of sample: each source's points are predicted with
the front end fitted on its other sources alone.

The server's input stage, per Triton backend
(calibration/data/triton-backend-input/online-compute-input.csv): Triton reports, per request, the backend's "Server Compute Input" (perf_analyzer, measurements_metrics.md:
copying the request's tensors into the framework's own input tensors). The READMEs' online tables
publish it with the execution's batch, b = X T_exec / n (Little's law: X inferences/s, T_exec =
input + infer + output of one execution, n model instances all busy), so per backend
    T_in(B) = C + B / W_in,   B = b x bytes per image,
by least squares over its concurrencies; C >= 0 is the backend's fixed input stage per execution.
The points' front end is the protocol's: a point's backend time is gpumux's (or the published
Server Compute Infer) plus the C of the backend its serving entry names (BACKEND_OF); the entries
pooled on one protocol (BASE) share one fit of L and c, and each ships latency L + C of its
backend, bandwidth 1 / c (its per-byte input copy rides in W like the socket's). Both READMEs'
offline runs go over HTTP (`perf_client -i http`, triton/run_offline_performance_test_on_triton.py);
the entries keep the name `triton-grpc`.

    /usr/bin/python3 calibration/fit/triton_frontend.py [--gpumux build/gpumux]
        [--report calibration/fit/TRITON-FRONTEND.md] [--check]

--check: exit 1 unless kernel-families.yaml's `serving:` values are this fit's (as written:
latency in whole us, bandwidth to 3 significant digits in MB/s).
"""
import argparse
import csv
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "calibration" / "fit" / "triton-frontend.csv"
FAMILIES = ROOT / "calibration" / "workloads" / "kernel-families.yaml"
UNIT_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}
PROBE_BANDWIDTH = 1e9  # bytes/s of the payload probe
# Front ends without a payload term (L alone): with system shared memory the client and the
# server map the same buffers, so the tensors are neither serialized nor sent (Triton docs,
# protocol extension "shared-memory"); only the request's control message crosses the protocol.
PAYLOAD_FREE = {"triton-shm"}
STAGE_DATA = ROOT / "calibration" / "data" / "triton-backend-input" / "online-compute-input.csv"
# The Triton backend behind each entry that has an input stage of its own (the ONNX Runtime
# backend of the PyTorch README, the TensorFlow backend of the TF-TRT SavedModel) and the entry
# whose protocol fit it shares.
BACKEND_OF = {"triton-grpc": "onnxruntime", "triton-grpc-tensorflow": "tensorflow"}
BASE = {"triton-grpc-tensorflow": "triton-grpc"}


def input_stages() -> dict:
    """backend -> (C in ms, W_in in bytes/s, points): least squares of Server Compute Input
    against the execution's bytes (Little's law batch), C clamped at 0."""
    with STAGE_DATA.open(newline="") as f:
        rows = list(csv.DictReader(f))
    out = {}
    for backend in sorted({r["backend"] for r in rows}):
        pts = []
        for r in rows:
            if r["backend"] != backend:
                continue
            t_exec = sum(float(r[k]) for k in ("compute_input_ms", "compute_infer_ms",
                                               "compute_output_ms"))
            batch = float(r["inferences_per_s"]) * t_exec * 1e-3 / int(r["instances"])
            pts.append((batch * int(r["bytes_per_image"]), float(r["compute_input_ms"])))
        n = len(pts)
        mx = sum(x for x, _ in pts) / n
        my = sum(y for _, y in pts) / n
        slope = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
        out[backend] = (max(0.0, my - slope * mx), 1e3 / slope if slope > 0 else 0.0, n)
    return out


def points() -> list:
    with DATA.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        r["target_ms"] = float(r["value"]) * UNIT_MS[r["unit"]]
        if r.get("cuda_graph", "") not in ("", "true", "false"):
            raise SystemExit(f"{DATA}: {r['id']}: cuda_graph {r['cuda_graph']!r} is not true or "
                             "false")
    return rows


def latency_ms(gpumux: str, point: dict, tmp: Path, serving: dict | None) -> float:
    """gpumux's mean latency of the point's request alone, one in flight."""
    workload = {"model": point["model"], "batch": int(point["batch"]), "phase": "inference",
                "dtype": point["dtype"], "runtime": point["runtime"],
                "arrivals": {"process": "closed", "concurrency": 1, "think": "1ms"}}
    if point["seq_len"]:
        workload["seq_len"] = int(point["seq_len"])
    if point.get("io_dtype"):
        workload["io_dtype"] = point["io_dtype"]
    if point.get("cuda_graph") == "true":
        workload["cuda_graph"] = True  # the backend replayed the request as one CUDA graph
    if serving:
        workload.update(serving)
    scen = {"name": "triton-fit", "seed": 1, "duration": "2s", "warmup": "0s",
            "gpus": [{"name": "gpu0", "model": point["profile"], "sharing": {"mode": "exclusive"}}],
            "tenants": [{"name": "t", "device": "gpu0", "workload": workload}]}
    path = tmp / f"{point['id']}.yaml"
    path.write_text(yaml.safe_dump(scen, sort_keys=False))
    out = subprocess.run([gpumux, "run", str(path), "--json", "-q"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise SystemExit(f"{point['id']}: gpumux exit {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)["tenants"]["t"]["latency_ns"]["mean"] / 1e6


def measure(gpumux: str, rows: list, tmp: Path, stages: dict) -> None:
    """Adds to each point: front_end_ms (measured minus backend), payload_bytes, backend_ms."""
    for r in rows:
        alone = latency_ms(gpumux, r, tmp, None)
        probe = latency_ms(gpumux, r, tmp, {
            "serving": BASE.get(r["serving"], r["serving"]),
            "host": {"front_end_latency": "0ns", "front_end_bandwidth": "1GB/s"}})
        r["payload_bytes"] = (probe - alone) * 1e-3 * PROBE_BANDWIDTH
        r["backend_source"] = "published" if r["backend_ms"] else "gpumux"
        r["backend_ms"] = float(r["backend_ms"]) if r["backend_ms"] else alone
        stage = stages.get(BACKEND_OF.get(r["serving"], ""), (0.0, 0.0, 0))[0]
        if stage > 0:
            r["backend_source"] += f" + input stage {stage:.3g} ms"
        r["backend_ms"] += stage
        r["front_end_ms"] = r["target_ms"] - r["backend_ms"]


def fit(rows: list, payload_free: bool = False) -> tuple[float, float]:
    """(L in ms, c in ms per byte) >= 0 minimising sum ((backend + L + c B - y) / y)^2; c = 0
    when `payload_free`."""
    w = [1 / r["target_ms"] ** 2 for r in rows]
    y = [r["front_end_ms"] for r in rows]
    x = [r["payload_bytes"] for r in rows]
    sw = sum(w)
    mean_only = sum(wi * yi for wi, yi in zip(w, y)) / sw
    mx = sum(wi * xi for wi, xi in zip(w, x)) / sw
    sxx = sum(wi * (xi - mx) ** 2 for wi, xi in zip(w, x))
    if payload_free or sxx <= 1e-9 * max(1.0, mx * mx * sw):
        return max(0.0, mean_only), 0.0
    my = mean_only
    c = sum(wi * (xi - mx) * (yi - my) for wi, xi, yi in zip(w, x, y)) / sxx
    latency = my - c * mx
    if c < 0:
        return max(0.0, my), 0.0
    if latency < 0:  # L = 0: c alone through the origin
        c = sum(wi * xi * yi for wi, xi, yi in zip(w, x, y)) / sum(wi * xi * xi for wi, xi in zip(w, x))
        return 0.0, max(0.0, c)
    return latency, c


def predicted(r: dict, law: tuple[float, float]) -> float:
    return r["backend_ms"] + law[0] + law[1] * r["payload_bytes"]


def yaml_values(law: tuple[float, float]) -> tuple[str, str | None]:
    """The law as kernel-families.yaml writes it: latency in whole us, bandwidth in MB/s (3
    significant digits), None when the payload is free."""
    latency = f"{round(law[0] * 1e3)}us"
    if law[1] <= 0:
        return latency, None
    mb_per_s = 1e3 / law[1] / 1e6  # ms per byte -> bytes/s -> MB/s
    return latency, f"{float(f'{mb_per_s:.3g}'):g}MB/s"


def shipped(name: str) -> tuple[str | None, str | None]:
    entry = (yaml.safe_load(FAMILIES.read_text()).get("serving") or {}).get(name) or {}
    latency = (entry.get("latency") or {}).get("value")
    bandwidth = (entry.get("bandwidth") or {}).get("value")
    return latency, bandwidth


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpumux", default=str(ROOT / "build" / "gpumux"))
    ap.add_argument("--report", default=str(ROOT / "calibration" / "fit" / "TRITON-FRONTEND.md"))
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    rows = points()
    stages = input_stages()
    with tempfile.TemporaryDirectory() as td:
        measure(args.gpumux, rows, Path(td), stages)
    lines = ["# Serving front ends: the fit", "",
             "Generated by `calibration/fit/triton_frontend.py` (models/workload/host_time.hpp "
             "has the law, T_fe = L + (B_in + B_out) / W) from `calibration/fit/triton-frontend.csv` "
             "and `calibration/data/triton-backend-input/online-compute-input.csv` (sources in "
             "SOURCE.md there). Per protocol, "
             "L and W minimise the mean squared relative error of the points' total latency; out "
             "of sample, each source's points are predicted with the front end fitted on its other "
             "sources alone. A point's backend time is the source's own Server Compute Infer where "
             "it publishes one, else gpumux's latency without a front end, plus the fixed input "
             "stage C of the Triton backend its entry names (below: the source's own published "
             "Server Compute Input). An entry ships latency L + C of its backend. A point's payload "
             "is its request's input and output bytes at the element type its model's serving "
             "signature takes (the `io_dtype` column, `workload.io_dtype:`; empty = the compute "
             "dtype).", "",
             "## The Triton backends' input stage", "",
             "Server Compute Input per request against the execution's bytes (batch b = X T_exec / "
             "n by Little's law), least squares over the README's online concurrencies 16-64, "
             "T_in = C + B / W_in, C clamped at 0:", "",
             "| backend | points | C | W_in |", "|---|---:|---:|---:|"]
    for backend, (c_ms, w_in, n) in sorted(stages.items()):
        lines.append(f"| `{backend}` | {n} | {c_ms * 1e3:.0f} us | {w_in / 1e9:.2f} GB/s |")
    lines += ["", "The per-byte rates agree (a host copy of a few GB/s, carried by each entry's W); "
              "the TensorFlow backend alone has a fixed cost per execution, which the offline "
              "points show as the same offset at equal payload.", ""]
    mismatched = []
    summary = []
    for base in sorted({BASE.get(r["serving"], r["serving"]) for r in rows}):
        chosen = [r for r in rows if BASE.get(r["serving"], r["serving"]) == base]
        entries = sorted({r["serving"] for r in chosen})
        free = base in PAYLOAD_FREE
        law = fit(chosen, free)
        sources = sorted({r["source"] for r in chosen})
        folds = {s: fit([r for r in chosen if r["source"] != s], free) for s in sources}
        latency, bandwidth = yaml_values(law)
        lines += [f"## `{base}`" + (f" (entries {', '.join(f'`{e}`' for e in entries)})"
                                     if entries != [base] else ""), "",
                  f"**L = {latency}, W = {bandwidth or 'none (payload free)'}** (folds: "
                  + ", ".join(f"without `{s}` L = {yaml_values(folds[s])[0]}, W = "
                              f"{yaml_values(folds[s])[1] or 'none'}" for s in sources) + ")", "",
                  "| point | source | measured | backend | payload | front end measured | "
                  "in sample | out of sample |",
                  "|---|---|---:|---:|---:|---:|---:|---:|"]
        err_in, err_out, err_none = [], [], []
        for r in chosen:
            t = r["target_ms"]
            i, o = predicted(r, law), predicted(r, folds[r["source"]])
            err_in.append(abs(i / t - 1))
            err_out.append(abs(o / t - 1))
            err_none.append(abs(r["backend_ms"] / t - 1))
            lines.append(f"| `{r['id']}` | `{r['source']}` | {t:.4g} ms | {r['backend_ms']:.4g} ms "
                         f"({r['backend_source']}) | {r['payload_bytes'] / 1e6:.3g} MB | "
                         f"{r['front_end_ms']:.3g} ms | {i:.4g} ms ({100 * (i / t - 1):+.1f} %) | "
                         f"{o:.4g} ms ({100 * (o / t - 1):+.1f} %) |")
        text = (f"`{base}`: median |error| over {len(chosen)} points: without a front end "
                f"{100 * statistics.median(err_none):.1f} %, in sample "
                f"{100 * statistics.median(err_in):.1f} %, out of sample "
                f"{100 * statistics.median(err_out):.1f} %.")
        lines += ["", text, ""]
        for name in entries:
            stage = stages.get(BACKEND_OF.get(name, ""), (0.0, 0.0, 0))[0]
            entry = yaml_values((law[0] + stage, law[1]))
            if len(entries) > 1 or stage > 0:
                lines.append(f"* `{name}`: latency {entry[0]} (L + C of `{BACKEND_OF[name]}`, "
                             f"{stage * 1e3:.0f} us), bandwidth {entry[1] or 'none'}")
            summary.append(f"fitted {name}: L = {entry[0]}, W = {entry[1]}")
            if entry != shipped(name):
                mismatched.append(f"{name}: fit L = {entry[0]}, W = {entry[1]}; "
                                  f"kernel-families.yaml {shipped(name)}")
        lines.append("")
        summary.append(text)
    if not args.check:
        Path(args.report).write_text("\n".join(lines))
    print("\n".join(summary))
    if mismatched:
        print("kernel-families.yaml `serving:` is not this fit:\n  " + "\n  ".join(mismatched))
        return 1 if args.check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
