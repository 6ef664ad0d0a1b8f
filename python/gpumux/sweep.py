"""Parameter sweeps: one simulation per point of a grid of overrides, in parallel.

    frame = gpumux.sweep("scenarios/quickstart.yaml",
                         {"tenants.chat.workload.arrivals.rate": ["100/s", "200/s"],
                          "gpus.0.sharing.mode": ["exclusive", "time-slicing"]})
    # point, rate_per_s (100.0, 200.0), mode (categorical), status, tenant, device, p99_ns, ...

Rows come back in grid order (the cartesian product, the first key varying slowest) whatever
finished first, so a sweep gives the same frame with 1 process, 8 processes or a dask cluster.
"""
from __future__ import annotations

import itertools
import os
import re
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed

import pandas as pd

#: Per-tenant metrics of a sweep row (one row per point x tenant).
TENANT_METRICS = ("p50_ns", "p99_ns", "mean_ns", "throughput_per_s", "completed", "failed",
                  "slowdown_mean", "oom_events")
#: Metrics of the tenant's device, as "device_<metric>" columns.
DEVICE_METRICS = ("sm_busy", "dram_busy")
#: Per-point metrics of a cluster scenario (one row per point; docs/metrics.md "Cluster metrics").
CLUSTER_METRICS = ("allocation", "gpus_allocated", "fragmentation_ratio", "failed_on_arrival",
                   "never_started", "pending_p99_s", "cost")

_VALUE = re.compile(r"^\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*(.*?)\s*$")
#: unit -> (dimension, factor to the dimension's base unit, column suffix)
_UNITS = {
    "ns": ("time", 1.0, "ns"), "us": ("time", 1e3, "us"), "µs": ("time", 1e3, "us"),
    "ms": ("time", 1e6, "ms"), "s": ("time", 1e9, "s"), "min": ("time", 60e9, "min"),
    "h": ("time", 3600e9, "h"),
    "/s": ("rate", 1.0, "per_s"), "/min": ("rate", 1 / 60, "per_min"),
    "/h": ("rate", 1 / 3600, "per_h"),
    "B": ("size", 1.0, "bytes"), "KiB": ("size", 2.0 ** 10, "KiB"), "Ki": ("size", 2.0 ** 10, "KiB"),
    "MiB": ("size", 2.0 ** 20, "MiB"), "Mi": ("size", 2.0 ** 20, "MiB"),
    "GiB": ("size", 2.0 ** 30, "GiB"), "Gi": ("size", 2.0 ** 30, "GiB"),
    "TiB": ("size", 2.0 ** 40, "TiB"), "Ti": ("size", 2.0 ** 40, "TiB"),
    "KB": ("size", 1e3, "kB"), "kB": ("size", 1e3, "kB"), "MB": ("size", 1e6, "MB"),
    "GB": ("size", 1e9, "GB"), "TB": ("size", 1e12, "TB"),
    "%": ("percent", 1.0, "percent"),
}
_BASE = {"time": "ns", "rate": "per_s", "size": "bytes", "percent": "percent"}


def grid_column(key: str, values) -> tuple[str, list]:
    """(column name, values) of one grid key: numbers with a unit ("100/s", "2ms", "8GiB") are
    parsed to floats, the unit put in the name (rate_per_s, timeslice_ms; values in different
    units of one dimension are converted to its base: ns, per_s, bytes); plain numbers stay
    numbers; anything else (names, modes) is returned as is, named by the key's last part."""
    name = key.rsplit(".", 1)[-1]
    parsed = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            return name, list(values)
        if isinstance(value, (int, float)):
            parsed.append((float(value), ""))
            continue
        m = _VALUE.match(value)
        if not m or (m.group(2) and m.group(2) not in _UNITS):
            return name, list(values)
        parsed.append((float(m.group(1)), m.group(2)))
    units = {u for _, u in parsed}
    if units == {""}:
        numbers = [v for v, _ in parsed]
        if all(isinstance(x, int) or (isinstance(x, str) and x.strip().lstrip("+-").isdigit())
               for x in values):
            numbers = [int(v) for v in numbers]
        return name, numbers
    if "" in units:
        return name, list(values)
    dimensions = {_UNITS[u][0] for u in units}
    if len(dimensions) != 1:
        return name, list(values)
    suffixes = {_UNITS[u][2] for u in units}
    if len(suffixes) == 1:
        return f"{name}_{suffixes.pop()}", [v for v, _ in parsed]
    dimension = dimensions.pop()
    return f"{name}_{_BASE[dimension]}", [v * _UNITS[u][1] for v, u in parsed]


def grid_columns(keys, points) -> dict:
    """{column: values} for the grid keys of POINTS (see :func:`grid_column`); a name two keys
    share gets the key's earlier parts (tenants_0_rate_per_s)."""
    columns = {}
    named = [(key, *grid_column(key, [p.get(key) for p in points])) for key in keys]
    counts = {}
    for _, name, _ in named:
        counts[name] = counts.get(name, 0) + 1
    for key, name, values in named:
        if counts[name] > 1:
            prefix = key.rsplit(".", 1)[0].replace(".", "_")
            name = f"{prefix}_{name}"
        columns[name] = values
    return columns


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


def metrics_rows(summary: dict) -> list[dict]:
    """One row per tenant of a summary (docs/metrics.md): status, tenant, device, TENANT_METRICS and
    device_sm_busy / device_dram_busy of the tenant's device."""
    rows = []
    devices = summary.get("devices", {}) or {}
    for name, t in (summary.get("tenants", {}) or {}).items():
        latency = t.get("latency_ns", {}) or {}
        values = {"p50_ns": latency.get("p50"), "p99_ns": latency.get("p99"),
                  "mean_ns": latency.get("mean"), "throughput_per_s": t.get("throughput_per_s"),
                  "completed": t.get("completed"), "failed": t.get("failed"),
                  "slowdown_mean": t.get("slowdown_mean"), "oom_events": t.get("oom_events")}
        row = {"status": summary.get("status"), "tenant": name, "device": t.get("device")}
        for metric in TENANT_METRICS:
            v = values[metric]
            row[metric] = float("nan") if v is None else v
        device = devices.get(t.get("device"), {}) or {}
        for metric in DEVICE_METRICS:
            v = device.get(metric)
            row[f"device_{metric}"] = float("nan") if v is None else v
        if not t.get("completed"):  # no completed request: latencies do not apply
            for metric in ("p50_ns", "p99_ns", "mean_ns"):
                row[metric] = float("nan")
        rows.append(row)
    return rows


def cluster_rows(summary: dict) -> list[dict]:
    """The one row of a cluster replay's summary: policy as status, CLUSTER_METRICS."""
    return [{"status": summary.get("policy"),
             "allocation": summary["allocation"]["gpu_milli_final"],
             "gpus_allocated": summary["allocation"]["gpus_final"],
             "fragmentation_ratio": summary["fragmentation"]["fgd_final_ratio"],
             "failed_on_arrival": summary["failed_on_arrival"],
             "never_started": summary["never_started"],
             "pending_p99_s": summary["pending"]["pending_p99_s"],
             "cost": summary["cost"]["total"]}]


def _run_point(text, is_path, source, overrides, seed):
    """Worker: one simulation -> (metrics row, error message or None). Top-level so it pickles
    into processes and dask workers. A cluster scenario runs the cluster replay."""
    import gpumux
    try:
        if gpumux._gpumux.is_cluster(text, is_path, source):
            import json
            native = gpumux._gpumux.run_cluster(text, is_path, overrides, source)
            return cluster_rows(json.loads(native["summary"])), None
        native = gpumux._gpumux.run(text, is_path, overrides, seed, source, None)
    except gpumux.ScenarioError as e:
        return None, str(e)
    import json
    return metrics_rows(json.loads(native.summary_json())), None


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

    A cluster scenario (``cluster:``) gives one row per point with CLUSTER_METRICS (allocation,
    fragmentation ratio, failed pods, pending p99, cost; ``status`` = the policy).

    Returns a tidy (long) DataFrame, one row per point x tenant, points in grid order:
    ``point`` (the point's number), one column per grid key (values parsed by
    :func:`grid_column`: "100/s" -> 100.0 in ``rate_per_s``, "2ms" -> 2.0 in ``timeslice_ms``;
    names and modes categorical), ``status``, ``tenant`` and ``device`` (categorical), the
    TENANT_METRICS (latencies in ns, NaN when not applicable) and ``device_sm_busy`` /
    ``device_dram_busy`` of the tenant's device; plus ``error`` with on_error="record" (a
    failed point is one row with NaN metrics). ``frame.pivot_table(index="rate_per_s",
    columns="tenant", values="p99_ns")`` gives a wide view.
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

    keys = list(dict.fromkeys(k for p in points for k in p))
    grid = grid_columns(keys, points)
    rows = []
    for i, (point, (metrics, error)) in enumerate(zip(points, outputs)):
        if error is not None and on_error == "raise":
            raise gpumux.ScenarioError(f"sweep point {point}: {error}")
        base = {"point": i, **{name: values[i] for name, values in grid.items()}}
        for metrics_row in metrics or [{"status": "error"}]:
            row = dict(base)
            row.update(metrics_row)
            if on_error == "record":
                row["error"] = error
            rows.append(row)
    cluster = gpumux._gpumux.is_cluster(text, is_path, source)
    columns = (["point", *grid, "status", *CLUSTER_METRICS] if cluster else
               ["point", *grid, "status", "tenant", "device", *TENANT_METRICS,
                *(f"device_{m}" for m in DEVICE_METRICS)])
    if on_error == "record":
        columns.append("error")
    frame = pd.DataFrame(rows, columns=columns)
    if cluster:  # one row per point: the replay's metrics, status = the policy
        frame["status"] = frame["status"].astype("category")
        for name, values in grid.items():
            if not all(isinstance(v, (int, float)) for v in values):
                frame[name] = pd.Categorical(frame[name].astype(str),
                                             categories=list(dict.fromkeys(map(str, values))))
        return frame
    tenants = list(dict.fromkeys(r["tenant"] for r in rows if r.get("tenant") is not None))
    devices = list(dict.fromkeys(r["device"] for r in rows if r.get("device") is not None))
    frame["tenant"] = pd.Categorical(frame["tenant"], categories=tenants)
    frame["device"] = pd.Categorical(frame["device"], categories=devices)
    frame["status"] = frame["status"].astype("category")
    for name, values in grid.items():
        if not all(isinstance(v, (int, float)) for v in values):
            frame[name] = pd.Categorical(frame[name].astype(str),
                                         categories=list(dict.fromkeys(map(str, values))))
    return frame
