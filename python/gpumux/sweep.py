"""Parameter sweeps: one simulation per point of a grid of overrides, in parallel.

    frame = gpumux.sweep("scenarios/quickstart.yaml",
                         {"tenants.0.workload.arrivals.rate": ["100/s", "200/s"],
                          "gpus.0.sharing.mode": ["exclusive", "time-slicing"]})

Rows come back in grid order (the cartesian product, the first key varying slowest) whatever
finished first, so a sweep gives the same frame with 1 process, 8 processes or a dask cluster.
"""
from __future__ import annotations

import itertools
import os
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed

import pandas as pd

#: Per-tenant metrics in a sweep row, as "<tenant>.<metric>" columns.
TENANT_METRICS = ("p50_ns", "p99_ns", "mean_ns", "throughput_per_s", "completed", "failed",
                  "slowdown_mean", "oom_events")
#: Per-device metrics, as "<device>.<metric>" columns.
DEVICE_METRICS = ("sm_busy", "dram_busy")


def grid_points(grid) -> list[dict]:
    """The points of a grid: a dict {key: [values]} gives the cartesian product in order (first
    key slowest); a list of dicts is taken as the explicit points."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        values = []
        for key in keys:
            v = grid[key]
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                v = [v]
            values.append(list(v))
        return [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    points = [dict(p) for p in grid]
    for p in points:
        if not isinstance(p, dict):
            raise TypeError("grid must be a dict {key: [values]} or a list of dicts")
    return points


def metrics_row(summary: dict) -> dict:
    """The sweep columns from one summary (SPEC §4)."""
    row = {"status": summary.get("status")}
    for name, t in summary.get("tenants", {}).items():
        latency = t.get("latency_ns", {}) or {}
        values = {"p50_ns": latency.get("p50"), "p99_ns": latency.get("p99"),
                  "mean_ns": latency.get("mean"), "throughput_per_s": t.get("throughput_per_s"),
                  "completed": t.get("completed"), "failed": t.get("failed"),
                  "slowdown_mean": t.get("slowdown_mean"), "oom_events": t.get("oom_events")}
        for metric in TENANT_METRICS:
            v = values[metric]
            row[f"{name}.{metric}"] = float("nan") if v is None else v
    for name, d in summary.get("devices", {}).items():
        for metric in DEVICE_METRICS:
            v = d.get(metric)
            row[f"{name}.{metric}"] = float("nan") if v is None else v
    return row


def _run_point(text, is_path, source, overrides, seed):
    """Worker: one simulation -> (metrics row, error message or None). Top-level so it pickles
    into processes and dask workers."""
    import gpumux
    try:
        native = gpumux._gpumux.run(text, is_path, overrides, seed, source, None)
    except gpumux.ScenarioError as e:
        return None, str(e)
    import json
    return metrics_row(json.loads(native.summary_json())), None


def sweep(scenario, grid, client=None, processes: int | None = None, *, overrides=None,
          seed: int | None = None, on_error: str = "raise", progress: bool = False,
          mp_context=None) -> pd.DataFrame:
    """Runs ``run(scenario, overrides=base + point)`` for every point of ``grid``.

    grid:       {override_key: [values, ...]} (cartesian product, first key slowest) or a
                list of {override_key: value} dicts.
    client:     a ``dask.distributed.Client``: points run as ``client.map`` tasks (the scenario
                travels as text, so workers need no access to the file; trace files are
                referenced by absolute path).
    processes:  local worker processes (default: one per CPU, at most one per point); 1 runs
                everything in this process.
    overrides:  base overrides applied before each point's; seed: the master seed for all.
    on_error:   "raise" (ScenarioError naming the point) or "record" (an ``error`` column,
                metrics NaN).
    progress:   show a tqdm bar (local processes).
    mp_context: a multiprocessing context for the pool (default: the platform's).

    Returns a DataFrame, one row per point in grid order: the grid keys' values, then status,
    "<tenant>.<metric>" for metric in TENANT_METRICS and "<device>.sm_busy" / ".dram_busy"; plus ``error``
    with on_error="record".
    """
    import gpumux
    if on_error not in ("raise", "record"):
        raise ValueError("on_error must be 'raise' or 'record'")
    points = grid_points(grid)
    text, is_path, source = gpumux._scenario_args(scenario)
    base = gpumux._override_list(overrides)
    seed = gpumux._seed(seed)
    tasks = [base + gpumux._override_list(p) for p in points]

    if client is not None:
        if is_path:  # ship the document, not the path; relative traces resolve as for the file
            with open(text, encoding="utf-8") as f:
                text, is_path, source = f.read(), False, os.path.abspath(text)
        n = len(tasks)
        futures = client.map(_run_point, [text] * n, [is_path] * n, [source] * n, tasks,
                             [seed] * n, pure=False)
        outputs = client.gather(futures)
    else:
        if processes is None:
            processes = os.cpu_count() or 1
        processes = max(1, min(int(processes), len(tasks)))
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=len(tasks), desc="gpumux sweep")
        outputs = [None] * len(tasks)
        if processes == 1:
            for i, task in enumerate(tasks):
                outputs[i] = _run_point(text, is_path, source, task, seed)
                if bar is not None:
                    bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=processes, mp_context=mp_context) as pool:
                futures = {pool.submit(_run_point, text, is_path, source, task, seed): i
                           for i, task in enumerate(tasks)}
                for future in as_completed(futures):
                    outputs[futures[future]] = future.result()
                    if bar is not None:
                        bar.update(1)
        if bar is not None:
            bar.close()

    rows = []
    for point, (metrics, error) in zip(points, outputs):
        if error is not None and on_error == "raise":
            raise gpumux.ScenarioError(f"sweep point {point}: {error}")
        row = dict(point)
        row.update(metrics or {"status": "error"})
        if on_error == "record":
            row["error"] = error
        rows.append(row)
    # Columns: the grid keys, then status and metrics in first-seen order, error last.
    columns = []
    for row in rows:
        columns.extend(c for c in row if c not in columns and c != "error")
    if on_error == "record":
        columns.append("error")
    return pd.DataFrame(rows, columns=columns)
