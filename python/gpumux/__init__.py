"""gpumux: discrete-event simulation of GPU sharing (MIG, time-slicing, MPS) from Python.

    import gpumux
    r = gpumux.run("scenarios/quickstart.yaml", overrides={"duration": "10s"}, seed=7)
    r.summary            # dict, the same JSON as `gpumux run --json`
    r.tenants            # pandas DataFrame, one row per tenant (latencies in ns)
    r.requests           # one row per request
    r.save("out.h5")     # the same HDF5 file as `gpumux run -o out.h5`
    gpumux.load("out.h5")
    gpumux.compare("scenarios/hybrid-h100.yaml", ["mig", "time-slicing", "mps"])
    gpumux.sweep("scenarios/quickstart.yaml", {"tenants.0.workload.arrivals.rate": ["100/s", "200/s"]})
    gpumux.plan("scenarios/plan/plan-h100-node.yaml").setups   # the cheapest setup meeting every SLO

The simulation itself runs in C++ (the same entry point as the `gpumux` command) with the GIL
released, so threads can run simulations in parallel. Bad input raises :class:`ScenarioError`
(a ``ValueError``) whose message is the one-line ``FILE:LINE:COLUMN: KEY.PATH: message``.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any, Callable, Union

# The Python API's dependencies, checked first so a venv without them (a pyenv CPython's) gets
# one line saying what to do instead of a traceback from deep inside the package.
_missing = [name for name in ("numpy", "pandas", "h5py", "yaml")
            if importlib.util.find_spec(name) is None]
if _missing:
    raise ModuleNotFoundError(
        f"gpumux: the Python API needs numpy, pandas, h5py and PyYAML, and this Python "
        f"({sys.executable}) has no {', '.join(_missing)}: install them (Debian: "
        f"scripts/install-deps.sh, or a venv with --system-site-packages; elsewhere: pip install "
        f"numpy pandas h5py pyyaml); the gpumux command works without them",
        name=_missing[0])

from . import _native as _native_loader  # noqa: E402

_gpumux = _native_loader.load(__path__)  # noqa: F821 (__path__ is the package's)

import pandas as pd  # noqa: E402

from ._h5 import load  # noqa: E402
from .result import Result, metrics, metric_table  # noqa: E402
from .cluster import ClusterResult  # noqa: E402
from . import scenarios  # noqa: E402  (gpumux.scenarios.path("quickstart"))

__version__: str = _gpumux.version()

#: Raised for any bad input: scenario syntax, schema, units, unknown keys, bad overrides,
#: devices that do not fit, unknown strategies, an argument out of range or not a number
#: (seed=inf, jobs=2**40, headroom="x"). A ``ValueError``. An argument of the wrong type
#: (progress=5, overrides=5, record_requests="no") is a ``TypeError`` naming it; neither comes
#: from pybind11 or half-way through a run.
ScenarioError = _gpumux.ScenarioError
ScenarioError.__module__ = "gpumux"  # shown as gpumux.ScenarioError; pickles by that name

__all__ = ["ClusterResult", "run", "load", "compare", "sweep", "plan", "validate", "inspect",
           "calibrate",
           "save_compare", "compare_columns",
           "Result", "PlanResult", "metrics", "metric_table", "scenarios", "ScenarioError",
           "__version__", "STRATEGIES", "SHARING_MODES"]

#: A scenario as run/validate/compare/sweep/plan take it: a path (str / os.PathLike), the YAML
#: document as Python objects (a mapping), YAML text (a str with a newline), or a Result.
ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any], Result]
#: Overrides: {"gpus.0.sharing.timeslice": "2ms", ...} or ["KEY=VALUE", ...] (None: none).
Overrides = Union[Mapping[str, Any], Iterable[str], None]
#: A progress callback: (simulated ns, horizon ns, events so far).
Progress = Callable[[int, int, int], Any]

#: The strategy names compare() accepts (from the strategy registry, models/strategies/).
STRATEGIES: tuple[str, ...] = tuple(_gpumux.strategies())
#: The ``sharing.mode`` values a scenario may name (from the same registry).
SHARING_MODES: tuple[str, ...] = tuple(_gpumux.sharing_modes())


def _native_module():
    return _gpumux


# ---------------------------------------------------------------------------------------------
# argument normalisation (shared with sweep.py, which runs it in worker processes)
# ---------------------------------------------------------------------------------------------
def _plain(value: Any) -> Any:
    """Converts mappings, sequences, numpy scalars and paths into YAML-safe plain values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, (str, bytes)):
        try:
            return value.item()  # numpy scalar
        except (TypeError, ValueError):
            pass
    return value


def _scenario_args(scenario: ScenarioLike) -> tuple[str, bool, str]:
    """(text or path, is_path, source_name) for the C++ loader.

    * a dict (or any Mapping): dumped to YAML; error positions refer to that YAML; relative
      trace paths resolve against the current directory;
    * a str containing a newline: YAML text;
    * a str or os.PathLike: a scenario file.
    """
    if isinstance(scenario, Result):
        return scenario.scenario_yaml, False, "<result>"
    if isinstance(scenario, Mapping):
        import yaml
        try:
            return yaml.safe_dump(_plain(scenario), sort_keys=False), False, "<dict>"
        except yaml.YAMLError as e:
            raise ScenarioError(f"<dict>: a value YAML cannot represent: {e}") from None
        except RecursionError:  # a dict or list that holds itself, or nests past the stack
            raise ScenarioError("<dict>: the scenario refers to itself (a dict or list inside "
                                "itself) or nests too deeply to write as YAML") from None
    if isinstance(scenario, str) and "\n" in scenario:
        return scenario, False, "<text>"
    if isinstance(scenario, (str, os.PathLike)):
        path = os.fspath(scenario)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such scenario file")
        return path, True, path
    raise TypeError(f"scenario must be a path, a dict or YAML text, not {type(scenario).__name__}")


def _override_value(value: Any, key: str = "") -> str:
    value = _plain(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    import yaml
    try:
        return yaml.safe_dump(value, default_flow_style=True, width=1 << 30).strip()
    except yaml.YAMLError:
        raise ScenarioError(f"--set {key}: a {type(value).__name__} value cannot be written as "
                            "YAML (use a str, number, bool, None, list or dict)") from None


def _checked_override(text: str) -> str:
    """KEY=VALUE as the C++ side receives it: text that encodes to UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ScenarioError(f"--set {text.partition('=')[0]}: not UTF-8 text ({e.reason} at "
                            f"character {e.start})") from None
    return text


def _override_list(overrides: Overrides) -> list[str]:
    """dict {key: value} / list of "KEY=VALUE" / list of (key, value) -> ["KEY=VALUE", ...]."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [_checked_override(f"{k}={_override_value(v, k)}") for k, v in overrides.items()]
    if isinstance(overrides, str):
        return [_checked_override(overrides)]
    if not isinstance(overrides, Iterable):
        raise TypeError(f"overrides must be a dict, a 'KEY=VALUE' str or a list of them, not "
                        f"{type(overrides).__name__}")
    out = []
    for item in overrides:
        if isinstance(item, str):
            out.append(_checked_override(item))
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            out.append(_checked_override(f"{item[0]}={_override_value(item[1], item[0])}"))
        else:
            raise TypeError(f"override must be 'KEY=VALUE' or (key, value), not {item!r}")
    return out


def _seed(seed) -> int | None:
    """The master seed: a whole number in [0, 2**64 - 1] (ScenarioError otherwise)."""
    if seed is None:
        return None
    value = _plain(seed)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ScenarioError(f"seed must be a whole number, not {type(value).__name__}")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(inf)
        raise ScenarioError(f"seed must be a whole number, not {value!r}") from None
    if isinstance(value, float) and number != value:
        raise ScenarioError(f"seed must be a whole number, not {value!r}")
    if not 0 <= number < 2**64:
        raise ScenarioError(f"seed must be in 0..2**64 - 1 (a 64-bit seed), not {number}")
    return number


def _count(value, name: str, low: int, high: int) -> int:
    """A whole-number argument in [low, high]: TypeError for another type (bools included),
    ScenarioError for a value out of range (e.g. jobs=2**40, which pybind11 could not pass as
    an int and raised its own TypeError for)."""
    value = _plain(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a whole number, not {type(value).__name__} {value!r}")
    if isinstance(value, float):
        if not value.is_integer():  # NaN and infinities too
            raise ScenarioError(f"{name} must be a whole number, not {value!r}")
        value = int(value)
    if not low <= value <= high:
        raise ScenarioError(f"{name} must be from {low} to {high}, not {value}")
    return value


def _real(value, name: str, low: float, high: float) -> float:
    """A finite number in [low, high]: ScenarioError for NaN, infinities, text that is not a
    number or a value out of range (float('x') raised a bare ValueError; int(inf) an
    OverflowError)."""
    value = _plain(value)
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number, not bool")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ScenarioError(f"{name} must be a finite number, not {value!r}") from None
    if not (low <= number <= high):  # NaN fails too
        raise ScenarioError(f"{name} must be a finite number from {low:g} to {high:g}, "
                            f"not {value!r}")
    return number


def _progress(progress):
    """PROGRESS when it is None or callable; TypeError before the run otherwise (it was called
    4096 events in, from C++)."""
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable(now_ns, horizon_ns, events) or None, not "
                        f"{type(progress).__name__}")
    return progress


def _flag(value, name: str) -> bool:
    """A keyword that must be True or False (numpy bools too): 'no' is not False, so anything
    else is a TypeError rather than taken as true."""
    value = _plain(value)
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__} {value!r}")
    return value


def _seed_overrides(seed) -> list:
    """--seed for a cluster replay: the `seed` key, applied after the overrides (as the CLI)."""
    number = _seed(seed)
    return [] if number is None else [f"seed={number}"]


def _dask_client(client, name: str = "client"):
    """CLIENT when it can run tasks (``map`` and ``gather``, as a dask.distributed.Client);
    TypeError otherwise, before any work is sent."""
    if client is not None and not (callable(getattr(client, "map", None))
                                   and callable(getattr(client, "gather", None))):
        raise TypeError(f"{name} must be a dask.distributed.Client (with map and gather), not "
                        f"{type(client).__name__}")
    return client


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------
def run(scenario: ScenarioLike, overrides: Overrides = None, seed: int | None = None,
        progress: Progress | None = None, *,
        record_requests: bool = True, client: Any = None,
        shards: int | None = None) -> Result | ClusterResult:
    """Simulates one scenario and returns its :class:`Result` (a :class:`ClusterResult` for a
    scenario with a ``cluster:`` section: the cluster replay).

    scenario:  a path (str / os.PathLike), a dict (the YAML document as Python objects), YAML
               text (a str with a newline), or a Result (re-runs its resolved scenario).
    overrides: {"gpus.0.sharing.timeslice": "2ms", ...}, or ["KEY=VALUE", ...] — the CLI's
               ``--set``. Values that are not str are written as YAML (numbers, bools, dicts).
    seed:      the master seed (the CLI's ``--seed``); default: the scenario's.
    progress:  optional callable(now_ns, horizon_ns, events) called every 4096 events
               (e.g. to drive a tqdm bar); an exception from it stops the run and propagates.
    record_requests: keep one record per request (48 B each; and output.kernels' kernel
               records) for ``.requests`` / ``.kernels`` and ``save``. The work budget counts
               them: a run whose records would not fit (over 16 GiB with the rest) raises
               ScenarioError before it starts, naming the key that drives it; False keeps the
               summary and tables only (``.requests`` empty), as ``gpumux run`` without -o;
               ``gpumux run -o`` streams the records to the file instead.
    client:    a ``dask.distributed.Client``, for a cluster scenario only: the replay runs
               here once, then its workload pods' device simulation runs as Dask tasks, one per
               group of nodes (balanced by estimated kernel launches), gathered into the same
               ClusterResult, bit for bit, as without a client; ``.tasks`` then has each task's
               nodes, pods, estimated launches, wall and CPU seconds and worker, and
               ``.critical_path_s`` the replay plus the longest task (docs/cluster.md).
    shards:    with ``client``: node groups (tasks); default 4 per worker.

    Runs in C++ with the GIL released. Ctrl-C raises KeyboardInterrupt (main thread).
    Raises ScenarioError for bad input, FileNotFoundError for a missing scenario file.
    """
    record_requests = _flag(record_requests, "record_requests")
    text, is_path, source = _scenario_args(scenario)
    client = _dask_client(client)
    if _gpumux.is_cluster(text, is_path, source):
        # A `cluster:` scenario: the cluster replay (docs/cluster.md); seed as the CLI's --seed.
        if client is not None:
            from . import _dask_cluster
            return _dask_cluster.run(client, text, is_path, source,
                                     _override_list(overrides) + _seed_overrides(seed), shards)
        if shards is not None:  # as the CLI's --shards without --dask (it was ignored)
            raise ScenarioError("shards=: only with client= (the node groups of the Dask "
                                "tasks); without a client the replay runs in this process")
        native = _gpumux.run_cluster(text, is_path,
                                     _override_list(overrides) + _seed_overrides(seed), source)
        return ClusterResult(native)
    if client is not None or shards is not None:
        raise ScenarioError(f"{'client' if client is not None else 'shards'}=: only for a "
                            "scenario with a `cluster:` section (its workload pods run as Dask "
                            "tasks)")
    native = _gpumux.run(text, is_path, _override_list(overrides), _seed(seed), source,
                         _progress(progress), record_requests=record_requests)
    return Result._from_native(native)


def validate(scenario: ScenarioLike, overrides: Overrides = None) -> dict:
    """Loads and resolves a scenario without running it (``gpumux validate``).

    Returns {"name", "seed", "duration_ns", "warmup_ns", "gpus", "tenants": [names],
    "devices": [{"name", "profile", "sms", "sharing", "tenants"}], "planning": bool (a `plan:`
    scenario with tenants not yet placed: checked against its GPU models, no devices),
    "warnings": [lines] (what is likely to fail, as `gpumux validate` prints)}; raises
    ScenarioError for what will fail (e.g. static memory over the device's). A scenario with a
    ``cluster:`` section gets the cluster loader's checks and ``gpumux validate --format json``'s
    answer: {"status": "ok", "kind": "cluster", "pools", "pods", "policy", "advertised"}.
    """
    text, is_path, source = _scenario_args(scenario)
    return _gpumux.validate(text, is_path, _override_list(overrides), source)


def inspect(scenario: ScenarioLike, overrides: Overrides = None) -> "pd.DataFrame":
    """Every tenant's kernel classes and where each parameter came from (``gpumux inspect``).

    One row per tenant and kernel class: tenant, device, kernel, count (kernels of the request
    in the class), duration_ns (solo on the whole GPU of the tenant's model), sm_fraction, waves,
    memory_bound, busy_share (the SM phase's share of solo time when it overlaps the memory
    phase, catalog kernels; -1: serial phases), working_set_bytes, repeat, launch (stream |
    graph), memory_bytes, memory_per_request_bytes, each followed by its ``*_origin``: "user", "default",
    "catalog:NAME" (the workload catalog, docs/workloads.md), "trace" or "ncu". ``scenario`` is
    a path or YAML text, as for run(); raises ScenarioError for bad input.
    """
    text, is_path, source = _scenario_args(scenario)
    return pd.DataFrame(_gpumux.inspect(text, is_path, _override_list(overrides), source))


def calibrate(data: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
              fit: str | Iterable[str] | None = None, profile: str | None = None,
              output: str | os.PathLike[str] | None = None, iterations: int = 3) -> dict:
    """Fits the time-alone parameters to measured points (``gpumux calibrate``,
    docs/calibration.md): kernel_fixed_cost, block_round_cost and host_per_request per runtime
    (``fit`` picks some: a list of names, or one str of comma-separated names as ``--fit``),
    cross-validated leaving one ``source`` out.

    ``data``: one calibration CSV path or several. Returns {"parameters": {key: {before_ns,
    fitted_ns, fold_min_ns, fold_max_ns, points}}, "errors": {mechanism: {points, before,
    in_sample, out_of_sample}} (median |relative error|), "points": [{id, source, measured_s,
    before_s, in_sample_s, out_of_sample_s, depends_on}], "sources", "simulations", "report"
    (Markdown)}. With ``output``, writes ``profile`` (default: the points' first profile) with
    the fitted values as ``fitted:`` entries, atomically, and adds "profile_text". Raises
    ScenarioError for bad data or arguments.

    ``data`` may instead be the CSVs calibration/microbench/run_all.sh wrote on your GPU (as
    ``gpumux calibrate results/raw/*.csv``; not mixed with catalog points): ``fit`` picks among
    timeslice, context_switch, preemption_latency, launch_overhead, graph_launch_overhead and
    hbm_bandwidth_measured. Returns the CLI's ``--json`` "microbench" block {"gpu", "date",
    "values": {key: {value, unit, samples, folds, fold_min, fold_max, files}}, "timeslice_us",
    "switch_us", "switch_in_us", "switch_out_us", "wait": {in_sample, out_of_sample, runs}},
    plus "report"; with ``output`` (``profile`` required) the profile with those values.
    """
    import datetime
    import tempfile
    if isinstance(data, (str, os.PathLike)):
        given = [os.fspath(data)]
    else:  # folders expanded by the extension, as the CLI reads them
        try:
            given = [os.fspath(p) for p in data]
        except TypeError:
            raise TypeError("data must be a path or a list of paths (str or os.PathLike), not "
                            f"{type(data).__name__} {data!r}") from None
    # fit as the CLI's --fit: "kernel_fixed_cost,host_per_request" or a list of names (a str was
    # taken letter by letter: "unknown parameter 'k'").
    if isinstance(fit, str):
        fit = fit.split(",")
    fit = list(fit or [])
    for key in fit:
        if not isinstance(key, str):
            raise TypeError(f"fit: each name must be a str, not {type(key).__name__} {key!r}")
    if profile is not None and not isinstance(profile, (str, os.PathLike)):
        raise TypeError(f"profile must be a str (a name or a .yaml path), not "
                        f"{type(profile).__name__} {profile!r}")
    profile = os.fspath(profile) if profile is not None else None
    if not isinstance(_plain(iterations), int) or isinstance(_plain(iterations), bool):
        raise ScenarioError(f"iterations: expected an integer from 1 to 10, got {iterations!r}")
    iterations = _count(iterations, "iterations", 1, 10)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    if output is not None:
        # As the CLI's -o: never over a data file (the measured points would be replaced).
        target = os.fspath(output)
        data_files = [os.path.join(p, f) for p in given if os.path.isdir(p)
                      for f in os.listdir(p) if f.endswith(".csv")]
        data_files += [p for p in given if not os.path.isdir(p)]
        if os.path.realpath(target) in {os.path.realpath(p) for p in data_files}:
            raise ScenarioError(f"output {target}: is one of the data files; writing it would "
                                "replace the measured points (name another file)")
    result = _gpumux.calibrate(given, fit, iterations, profile or "",
                               output is not None, date)
    if output is not None:
        folder = os.path.dirname(os.path.abspath(target))
        tmp = None
        try:
            with tempfile.NamedTemporaryFile("w", dir=folder, delete=False,
                                             suffix=".tmp") as tmp:
                tmp.write(result["profile_text"])
            os.replace(tmp.name, target)
        except OSError as e:
            if tmp is not None and os.path.exists(tmp.name):
                os.unlink(tmp.name)  # no half-written temporary file left beside the target
            raise ScenarioError(f"output {target}: {e.strerror or e}") from None
    return result


def _strategy_list(strategies: str | Iterable[str]) -> list[str]:
    """The names of STRATEGIES (a comma-separated str or an iterable of names), checked as the
    CLI's --strategies: ScenarioError for none, one listed twice or two spellings of one
    strategy (exclusive and dedicated); TypeError for anything else than a str or names."""
    if isinstance(strategies, str):
        return list(_gpumux.parse_strategy_list(strategies))
    if isinstance(strategies, (bytes, Mapping)) or not isinstance(strategies, Iterable):
        raise TypeError("strategies must be a comma-separated str or a list of strategy names, "
                        f"not {type(strategies).__name__}")
    names = [str(_plain(s)).strip() for s in strategies]
    return list(_gpumux.parse_strategy_list(",".join(names)))


def compare_columns() -> list[str]:
    """The columns of compare()'s frame, from the metric table (docs/metrics.md): every
    ``/tenants`` column but the name (device, requests, ..., latency_p99_ns, latency_p99_low_ns,
    ..., slo_verdict, slo_met, cost), then ``device_<column>`` of every ``/devices`` metric of
    the tenant's device but the name (device_sm_busy, device_useful_fraction, ...), then
    mean_sm_busy (over the strategy's devices) and devices (their number). A metric added to
    the table reaches the frame with no change here."""
    table = metric_table()
    tenant = [m["column"] for m in table if m["scope"] == "tenant" and m["h5"]
              and m["column"] != "name"]
    device = [f"device_{m['column']}" for m in table if m["scope"] == "device" and m["h5"]
              and m["column"] != "name"]
    return [*tenant, *device, "mean_sm_busy", "devices"]


def compare_frame(results: Iterable[Result]) -> pd.DataFrame:
    """The compare() table from Results (e.g. loaded from a compare file)."""
    columns = compare_columns()
    rows = []
    index = []
    for r in results:
        tenants = r.tenants
        devices = r.devices
        mean_busy = float(devices["sm_busy"].mean()) if len(devices) else float("nan")
        for name, t in tenants.iterrows():
            device = t["device"]
            row = {c: t[c] for c in tenants.columns if c in columns}
            if device in devices.index:
                for c, value in devices.loc[device].items():
                    row[f"device_{c}"] = value
            row["mean_sm_busy"] = mean_busy
            row["devices"] = len(devices)
            rows.append(row)
            index.append((r.strategy or "as-is", name))
    # Index levels are categorical (strategies in the given order, tenants in scenario order);
    # frame.reset_index() gives the tidy long table with strategy and tenant columns.
    strategies = list(dict.fromkeys(s for s, _ in index))
    tenants = list(dict.fromkeys(t for _, t in index))
    frame = pd.DataFrame(rows, columns=columns, index=pd.MultiIndex.from_arrays(
        [pd.Categorical([s for s, _ in index], categories=strategies),
         pd.Categorical([t for _, t in index], categories=tenants)],
        names=["strategy", "tenant"]))
    for column in ("device", "device_profile", "device_sharing"):
        frame[column] = frame[column].astype(str).astype("category")
    return frame


def compare(scenario: ScenarioLike, strategies: str | Iterable[str],
            overrides: Overrides = None, seed: int | None = None, *,
            return_results: bool = False, progress: Progress | None = None
            ) -> pd.DataFrame | tuple[pd.DataFrame, dict[str, Result]]:
    """The same tenants and arrivals under several sharing strategies (``gpumux compare``).

    strategies: a list (["mig", "time-slicing", "mps"]) or a comma-separated str; names in
                :data:`STRATEGIES`.
    Returns a long DataFrame, one row per strategy x tenant, indexed by (strategy, tenant)
    (categorical levels; ``.reset_index()`` makes them columns), in the given strategy order, with
    the columns of :func:`compare_columns` (the metric table's): latencies in ns with their
    confidence bounds (latency_p99_ns, latency_p99_low_ns, latency_mean_ns, ...),
    throughput_per_s, slowdown_mean, failed, oom_events, slo_verdict, cost, the tenant's device's
    metrics (device_sm_busy, device_useful_fraction, ...) and mean_sm_busy (mean over the
    strategy's devices).
    With return_results=True returns (frame, {strategy: Result}); the Results can be written
    to one compare file with :func:`save_compare`. They keep every request record (48 B each,
    all strategies at once): the work budget refuses (ScenarioError) a comparison whose records
    would not fit; ``gpumux compare -o`` streams them to the file instead.
    Every strategy is resolved before any runs, so a bad one fails fast (ScenarioError).
    """
    return_results = _flag(return_results, "return_results")
    names = _strategy_list(strategies)
    text, is_path, source = _scenario_args(scenario)
    # The frame needs only the summaries: per-request records are kept only when the Results
    # are returned (their .requests tables).
    natives = _gpumux.compare(text, is_path, names, _override_list(overrides), _seed(seed),
                              source, _progress(progress), record_requests=return_results)
    results = {n.strategy: Result._from_native(n) for n in natives}
    frame = compare_frame(results.values())
    return (frame, results) if return_results else frame


def save_compare(path: str | os.PathLike[str],
                 results: Mapping[str, Result] | Iterable[Result]) -> None:
    """Writes Results from :func:`compare` (a dict or a list) into one compare file, as
    ``gpumux compare -o PATH``. load(PATH) gives them back as a list."""
    items = list(results.values()) if isinstance(results, Mapping) else list(results)
    natives = []
    for r in items:
        if not isinstance(r, Result) or r._native is None:
            raise TypeError("save_compare needs Results from run() or compare(), not loaded ones")
        natives.append(r._native)
    if not natives:
        raise ScenarioError(f"{os.fspath(path)}: save_compare needs at least one Result")
    _gpumux.save_compare(os.fspath(path), natives)


from .sweep import sweep  # noqa: E402
from .plan import plan, PlanResult  # noqa: E402

#: Submodules imported on first use: ``gpumux.plot.latency_cdf(r)`` with no ``import
#: gpumux.plot`` first. Lazily, so ``import gpumux`` does not import them; neither imports
#: matplotlib before it draws, so matplotlib stays optional for the rest of the API.
_LAZY_SUBMODULES = ("plot", "report")


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
