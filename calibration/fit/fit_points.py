"""The calibration points of one runtime, as the fitting scripts of calibration/fit/ read them.

A points CSV (docs/calibration.md: id, source, model, ..., runtime, profile, mig, metric, value,
unit, note) holds one measured request alone per row. `latency_points(path, runtime)` returns its
rows as dicts with `target_ms` (the measured latency in milliseconds) added, and refuses, naming
the file and the point, a row that is not a latency of that runtime: a script fits one runtime's
parameter, and a point of another would fit the wrong one. Its `cuda_graph` column (true/false,
docs/calibration.md) says whether the source launched the request's kernels as one CUDA graph;
these scripts fit a runtime's per-operator dispatch or device time per kernel, which a graph
replay does not pay, so a `true` row is refused too (it would inform nothing they fit).
"""
import csv
from pathlib import Path

UNIT_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def latency_points(path: Path, runtime: str | tuple) -> list:
    """The rows of `path`, each with `target_ms`; `runtime` names the one runtime (or a tuple
    of the runtimes) whose points the caller fits."""
    runtimes = (runtime,) if isinstance(runtime, str) else tuple(runtime)
    with Path(path).open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if r["metric"] != "latency" or r["runtime"] not in runtimes:
            raise SystemExit(f"{path}: {r['id']}: only {' and '.join(runtimes)} latency points "
                             "are fitted here")
        if r["unit"] not in UNIT_MS:
            raise SystemExit(f"{path}: {r['id']}: unit {r['unit']!r} is not one of "
                             + ", ".join(UNIT_MS))
        r["target_ms"] = float(r["value"]) * UNIT_MS[r["unit"]]
        graph = r.get("cuda_graph", "")
        if graph not in ("", "true", "false"):
            raise SystemExit(f"{path}: {r['id']}: cuda_graph {graph!r} is not true or false")
        if graph == "true":
            raise SystemExit(f"{path}: {r['id']}: a CUDA-graph point pays no per-operator "
                             "dispatch or runtime device time per kernel: nothing fitted here")
    return rows
