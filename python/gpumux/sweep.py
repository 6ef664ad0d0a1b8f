"""Parameter sweeps: one simulation per point of a grid of overrides, in parallel.

    frame = gpumux.sweep("scenarios/quickstart.yaml",
                         {"tenants.chat.workload.arrivals.rate": ["100/s", "200/s"],
                          "gpus.0.sharing.mode": ["exclusive", "time-slicing"]})
    # point, rate_per_s (100.0, 200.0), mode (categorical), status, tenant, device,
    # latency_p99_ns, latency_p99_low_ns, ..., device_sm_busy, ...

Rows come back in grid order (the cartesian product, the first key varying slowest) whatever
finished first, so a sweep gives the same frame with 1 process, 8 processes or a dask cluster.
"""
from __future__ import annotations

import itertools
import os
import re
from typing import TYPE_CHECKING, Any
from collections.abc import Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed

import pandas as pd

if TYPE_CHECKING:
    from . import Overrides, ScenarioLike



def tenant_metrics() -> list[tuple[str, str]]:
    """(column, summary JSON path) of the per-tenant metrics of a sweep row (one row per point x
    tenant): every metric of the metric table with a column and a JSON path (latency_p99_ns
    from latency_ns.p99, latency_p99_low_ns, ..., slo_verdict, cost)."""
    from . import metric_table
    return [(m["column"], m["json"]) for m in metric_table()
            if m["scope"] == "tenant" and m["h5"] and m["json"] and m["column"] != "device"]


def device_metrics() -> list[tuple[str, str]]:
    """(column, JSON path) of the metrics of the tenant's device, as "device_<column>"."""
    from . import metric_table
    return [(m["column"], m["json"]) for m in metric_table()
            if m["scope"] == "device" and m["h5"] and m["json"]]
#: Metrics of a cluster sweep row (a scenario with ``cluster:``; one row per point x pod class,
#: plus class "all"): the class's pending statistics (docs/metrics.md, "Cluster metrics") and
#: the cluster's allocation, fragmentation and cost at that point (the same on every class row).
CLUSTER_CLASS_METRICS = ("pods", "started", "never_started", "censored", "pending_p50_s",
                         "pending_p90_s", "pending_p99_s", "pending_max_s", "gpu_hours",
                         "cost_allocated", "cost_used")
CLUSTER_METRICS = CLUSTER_CLASS_METRICS + (
    "failed_on_arrival", "allocation_gpu_milli_final", "allocation_gpu_milli_mean",
    "allocation_gpus_final", "fragmentation_fgd_final_ratio", "fragmentation_unusable_final_milli",
    "cost_total", "cost_unallocated")

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


def grid_columns(keys, points, reserved=()) -> dict:
    """{column: values} for the grid keys of POINTS (see :func:`grid_column`); a name two keys
    share, or one of ``reserved`` (the result's own columns, e.g. ``pods``), gets the key's
    earlier parts (tenants_0_rate_per_s, cluster_openb_pods)."""
    columns = {}
    named = [(key, *grid_column(key, [p.get(key) for p in points])) for key in keys]
    counts: dict[str, int] = {}
    for _, name, _ in named:
        counts[name] = counts.get(name, 0) + 1
    for key, name, values in named:
        if counts[name] > 1 or name in reserved:
            prefix = key.rsplit(".", 1)[0].replace(".", "_")
            name = f"{prefix}_{name}"
        columns[name] = values
    return columns


#: The most points one sweep runs (each is a simulation; assumption: 100,000 runs of even
#: 0.1 s each are about 3 CPU-hours, past what a sweep is for). A larger grid is refused before
#: its points are built, so a typo (range(10**7)) costs neither time nor memory.
MAX_POINTS = 100_000


def grid_points(grid) -> list[dict]:
    """The points of a grid: a dict {key: [values]} gives the cartesian product in order (first
    key slowest); a list of dicts is taken as the explicit points. ValueError for a key with no
    values, a grid of no points or of more than MAX_POINTS; TypeError for a grid of another
    type. Cost: O(points x keys), the product counted before it is built."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        values = []
        total = 1
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(f"grid keys must be override keys (str), not "
                                f"{type(key).__name__} {key!r}")
            v = grid[key]
            if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
                v = [v]
            # At most MAX_POINTS + 1 values are taken: enough to know the grid is too large.
            listed = list(itertools.islice(v, MAX_POINTS + 1))
            if not listed:
                raise ValueError(f"sweep: grid key {key!r} has no values (the grid would have "
                                 "no points)")
            values.append(listed)
            total *= len(listed)
            if total > MAX_POINTS:
                raise ValueError(f"sweep: the grid has more than {MAX_POINTS:,} points (at "
                                 f"{key!r}); split it into several sweeps")
        return [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__iter__"):
        raise TypeError("grid must be a dict {key: [values]} or a list of dicts, not "
                        f"{type(grid).__name__}")
    points = []
    for p in itertools.islice(grid, MAX_POINTS + 1):
        if not isinstance(p, Mapping):
            raise TypeError("grid must be a dict {key: [values]} or a list of dicts, not a list "
                            f"holding {type(p).__name__}")
        points.append(dict(p))
    if not points:
        raise ValueError("sweep: the grid has no points (an empty list)")
    if len(points) > MAX_POINTS:
        raise ValueError(f"sweep: the grid has more than {MAX_POINTS:,} points; split it into "
                         "several sweeps")
    return points


def _json_at(obj, path: str):
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return None
        obj = obj[part]
    return obj


def metrics_rows(summary: dict) -> list[dict]:
    """One row per tenant of a summary (docs/metrics.md): status, tenant, device, the
    :func:`tenant_metrics` and ``device_<metric>`` of the tenant's device (NaN where the summary
    has no value: latencies of a tenant that completed nothing, bounds the samples do not
    give)."""
    rows = []
    devices = summary.get("devices", {}) or {}
    tenant_columns, device_columns = tenant_metrics(), device_metrics()
    for name, t in (summary.get("tenants", {}) or {}).items():
        row = {"status": summary.get("status"), "tenant": name, "device": t.get("device")}
        for column, path in tenant_columns:
            v = _json_at(t, path)
            row[column] = float("nan") if v is None else v
        device = devices.get(t.get("device"), {}) or {}
        for column, path in device_columns:
            v = _json_at(device, path)
            row[f"device_{column}"] = float("nan") if v is None else v
        if not t.get("completed"):  # no completed request: latencies do not apply
            for column, path in tenant_columns:
                if path.startswith("latency_ns."):
                    row[column] = float("nan")
        rows.append(row)
    return rows


def cluster_rows(summary: dict) -> list[dict]:
    """One row per pod class of a cluster summary (``gpumux run --json`` of a ``cluster:``
    scenario), then one for class "all": status, class, CLUSTER_METRICS."""
    def num(v):
        return float("nan") if v is None else v
    allocation = summary.get("allocation", {}) or {}
    fragmentation = summary.get("fragmentation", {}) or {}
    cost = summary.get("cost", {}) or {}
    cluster = {"failed_on_arrival": summary.get("failed_on_arrival"),
               "allocation_gpu_milli_final": allocation.get("gpu_milli_final"),
               "allocation_gpu_milli_mean": allocation.get("gpu_milli_mean"),
               "allocation_gpus_final": allocation.get("gpus_final"),
               "fragmentation_fgd_final_ratio": fragmentation.get("fgd_final_ratio"),
               "fragmentation_unusable_final_milli": fragmentation.get("unusable_final_milli"),
               "cost_total": cost.get("total"), "cost_unallocated": cost.get("unallocated")}
    rows = []
    classes = list(summary.get("classes", []) or [])
    overall = dict(summary.get("pending", {}) or {})
    overall["class"] = "all"
    for stats in classes + [overall]:
        row = {"status": "complete", "class": stats.get("class")}
        for metric in CLUSTER_CLASS_METRICS:
            row[metric] = num(stats.get(metric))
        for metric, value in cluster.items():
            row[metric] = num(value)
        rows.append(row)
    return rows


def _run_point(text, is_path, source, overrides, seed, cluster=False):
    """Worker: one simulation -> (metrics rows, error message or None). Top-level so it pickles
    into processes and dask workers. Records only what the rows use: no per-request records
    for a device scenario; the summary of a cluster replay (``cluster=True``)."""
    import gpumux
    import json
    try:
        if cluster:
            native = gpumux._gpumux.run_cluster(text, is_path,
                                                overrides + gpumux._seed_overrides(seed), source)
            return cluster_rows(json.loads(native["summary"])), None
        native = gpumux._gpumux.run(text, is_path, overrides, seed, source, None,
                                    record_requests=False)
    except gpumux.ScenarioError as e:
        return None, str(e)
    return metrics_rows(json.loads(native.summary_json())), None


def sweep(scenario: ScenarioLike, grid: Mapping[str, Iterable[Any]], client: Any = None,
          processes: int | None = None, *, overrides: Overrides = None,
          seed: int | None = None, on_error: str = "raise", progress: bool = False,
          mp_context: Any = None) -> pd.DataFrame:
    """Runs ``run(scenario, overrides=base + point)`` for every point of ``grid``.

    grid:       {override_key: [values, ...]} (cartesian product, first key slowest) or a
                list of {override_key: value} dicts; at least one point and at most
                MAX_POINTS (100,000), checked before any point is built (ValueError).
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

    Returns a tidy (long) DataFrame, one row per point x tenant, points in grid order:
    ``point`` (the point's number), one column per grid key (values parsed by
    :func:`grid_column`: "100/s" -> 100.0 in ``rate_per_s``, "2ms" -> 2.0 in ``timeslice_ms``;
    names and modes categorical), ``status``, ``tenant`` and ``device`` (categorical), the
    metric table's tenant metrics (:func:`tenant_metrics`: latency_p99_ns and its bounds
    latency_p99_low_ns / _high_ns, ..., slo_verdict; NaN when not applicable) and
    ``device_<metric>`` of the tenant's device (device_sm_busy, device_useful_fraction, ...); plus ``error`` with on_error="record" (a
    failed point is one row with NaN metrics). A scenario with a ``cluster:`` section (a cluster
    replay, docs/cluster.md) gives one row per point x pod class (and class "all") with
    ``class`` and the CLUSTER_METRICS instead of ``tenant``/``device`` and the tenant metrics:
    ``gpumux.sweep("scenarios/cluster/openb-default.yaml", {"cluster.scheduler.policy":
    ["fgd", "best-fit"], "cluster.openb.pods": [ABSOLUTE_PATH, ...]}, client=dask_client)``. ``frame.pivot_table(index="rate_per_s",
    columns="tenant", values="latency_p99_ns")`` gives a wide view.
    """
    import gpumux
    if on_error not in ("raise", "record"):
        raise ValueError("on_error must be 'raise' or 'record'")
    points = grid_points(grid)
    text, is_path, source = gpumux._scenario_args(scenario)
    base_overrides = gpumux._override_list(overrides)
    seed = gpumux._seed(seed)
    client = gpumux._dask_client(client)
    tasks = [base_overrides + gpumux._override_list(p) for p in points]
    cluster = gpumux._gpumux.is_cluster(text, is_path, source)

    if client is not None:
        if is_path:  # ship the document, not the path; relative traces resolve as for the file
            with open(text, encoding="utf-8") as f:
                text, is_path, source = f.read(), False, os.path.abspath(text)
        n = len(tasks)
        futures = client.map(_run_point, [text] * n, [is_path] * n, [source] * n, tasks,
                             [seed] * n, [cluster] * n, pure=False)
        outputs = client.gather(futures)
    else:
        if processes is None:
            processes = os.cpu_count() or 1
        processes = max(1, min(gpumux._count(processes, "processes", 1, 4096), len(tasks)))
        bar = None
        if progress:
            from tqdm.auto import tqdm
            bar = tqdm(total=len(tasks), desc="gpumux sweep")
        outputs = [None] * len(tasks)
        if processes == 1:
            for i, task in enumerate(tasks):
                outputs[i] = _run_point(text, is_path, source, task, seed, cluster)
                if bar is not None:
                    bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=processes, mp_context=mp_context) as pool:
                futures = {pool.submit(_run_point, text, is_path, source, task, seed, cluster): i
                           for i, task in enumerate(tasks)}
                for future in as_completed(futures):
                    outputs[futures[future]] = future.result()
                    if bar is not None:
                        bar.update(1)
        if bar is not None:
            bar.close()

    keys = list(dict.fromkeys(k for p in points for k in p))
    # The result's own columns (after the point and grid columns); grid names must avoid them.
    if cluster:
        categorical: tuple[str, ...] = ("class",)
        metric_columns = ["status", *categorical, *CLUSTER_METRICS]
    else:
        categorical = ("tenant", "device")
        metric_columns = ["status", *categorical, *(c for c, _ in tenant_metrics()),
                          *(f"device_{c}" for c, _ in device_metrics())]
    if on_error == "record":
        metric_columns.append("error")
    grid = grid_columns(keys, points, ("point", "error", *metric_columns))
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
    frame = pd.DataFrame(rows, columns=["point", *grid, *metric_columns])
    for column in categorical:
        values = list(dict.fromkeys(r[column] for r in rows if r.get(column) is not None))
        frame[column] = pd.Categorical(frame[column], categories=values)
    frame["status"] = frame["status"].astype("category")
    for name, values in grid.items():
        if not all(isinstance(v, (int, float)) for v in values):
            frame[name] = pd.Categorical(frame[name].astype(str),
                                         categories=list(dict.fromkeys(map(str, values))))
    return frame
