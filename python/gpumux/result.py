"""Result: one simulation run's output as pandas / NumPy objects.

A Result comes from :func:`gpumux.run` (backed by the C++ RunResult) or from :func:`gpumux.load`
(backed by the HDF5 file). Both give the same tables with the same columns:

* ``summary``     dict, the JSON summary (what ``gpumux run --json`` prints)
* ``percentiles`` dict, how the percentiles were computed (exact, or a sketch and its bound)
* ``tenants``     DataFrame, one row per tenant, index = tenant name, columns = the HDF5
                  ``/tenants`` columns (latencies in ns: latency_p50_ns, latency_p99_ns, ...;
                  each percentile's confidence bounds latency_p99_low_ns / _high_ns, NaN
                  where the samples give none; the count: latency_count)
* ``devices``     DataFrame, one row per device, index = device name ("gpu0", "gpu0/1")
* ``requests``    DataFrame, one row per request: tenant (categorical), request_id, arrival_ns,
                  start_ns, finish_ns (float, NaN when never), status (categorical completed /
                  failed / unfinished), latency_ns and queueing_ns (float, NaN when not applicable)
* ``events``      DataFrame: time_ns, kind (categorical oom/kill/fault/reject/restart),
                  tenant, device (categorical names, NaN when none), detail (str)
* Names (tenant, device, profile, sharing) are categorical; statistics of a tenant
  whose count is 0 (ttft_* without LLM tokens, latency_* with nothing completed) are NaN.
* ``slos``        DataFrame, one row per SLO target: tenant (categorical), key (p99, ttft_p99,
                  tpot_p50, ...), target_ns, value_ns (float, NaN without samples), samples,
                  low_ns / high_ns (the confidence interval, NaN: no bound), verdict
                  (categorical met / missed / inconclusive), met (bool, verdict == met);
                  ``tenants.slo_verdict`` is the per-tenant verdict ("" without an SLO) and
                  ``tenants.slo_met`` whether it is met (boolean, <NA> without an SLO)
* ``metrics``     DataFrame: unit and description of every column of tenants and devices (read
                  from the file's ``units``/``description`` attributes, or the bindings' metric
                  table; gpumux.metrics() gives the whole table)
* ``timeseries``  dict device name -> DataFrame (time_ns, sm_busy, dram_busy, memory_used_bytes)
* ``kernels``     DataFrame of kernel records (empty unless ``output: {kernels: true}``)

Tables are built on first access and cached.
"""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pandas as pd


def _native():
    from . import _native_module
    return _native_module()


def request_status_names() -> tuple:
    """Request status names by code (the C++ list, through the bindings)."""
    return tuple(_native().REQUEST_STATUS)


def event_kind_names() -> tuple:
    """Event kind names by code (the C++ list, through the bindings)."""
    return tuple(_native().EVENT_KINDS)


def slo_verdict_names() -> tuple:
    """SLO verdict names by code: met, missed, inconclusive (the C++ list)."""
    return tuple(_native().SLO_VERDICTS)


def _text(value) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace").rstrip("\x00")
    if isinstance(value, np.ndarray) and value.shape == ():
        return _text(value[()])
    return str(value)


def _requests_frame(columns: dict, tenant_names: list[str], status_names) -> pd.DataFrame:
    tenant = np.asarray(columns["tenant"]).astype(np.int64)
    status = np.asarray(columns["status"]).astype(np.int64)
    arrival = np.asarray(columns["arrival_ns"], dtype=np.int64)
    start = np.asarray(columns["start_ns"], dtype=np.int64)
    finish = np.asarray(columns["finish_ns"], dtype=np.int64)
    completed = status == 0
    latency = np.where(completed, (finish - arrival).astype(np.float64), np.nan)
    queueing = np.where(start >= 0, (start - arrival).astype(np.float64), np.nan)
    return pd.DataFrame({
        "tenant": pd.Categorical.from_codes(tenant, categories=list(tenant_names)),
        "request_id": np.asarray(columns["request_id"], dtype=np.uint64),
        "arrival_ns": arrival,
        # never started / never finished: NaN (the file stores -1), like latency_ns
        "start_ns": np.where(start >= 0, start.astype(np.float64), np.nan),
        "finish_ns": np.where(finish >= 0, finish.astype(np.float64), np.nan),
        "status": pd.Categorical.from_codes(status, categories=list(status_names)),
        "latency_ns": latency,
        "queueing_ns": queueing,
    })


def _name_or_none(indices, names) -> pd.Categorical:
    """Names as a categorical over `names` (in their order); NaN where the index is -1."""
    codes = np.asarray(indices).astype(np.int64)
    codes = np.where((codes >= 0) & (codes < len(names)), codes, -1)
    return pd.Categorical.from_codes(codes, categories=list(names))


#: Name columns of the tenants / devices tables, categorical.
_CATEGORICAL = ("device", "profile", "sharing")


def _events_frame(columns: dict, tenant_names, device_names, kind_names) -> pd.DataFrame:
    kind = np.asarray(columns["kind"]).astype(np.int64)
    return pd.DataFrame({
        "time_ns": np.asarray(columns["time_ns"], dtype=np.int64),
        "kind": pd.Categorical.from_codes(kind, categories=list(kind_names)),
        "tenant": _name_or_none(columns["tenant"], tenant_names),
        "device": _name_or_none(columns["device"], device_names),
        "detail": [_text(d) for d in columns["detail"]],
    })


def _kernels_frame(columns: dict | None, tenant_names, device_names) -> pd.DataFrame:
    names = ["tenant", "request_id", "kernel_index", "device", "start_ns", "finish_ns"]
    if columns is None or len(columns.get("tenant", ())) == 0:
        frame = pd.DataFrame({n: np.array([], dtype=np.int64) for n in names})
        frame["tenant"] = pd.Categorical([], categories=list(tenant_names))
        return frame
    return pd.DataFrame({
        "tenant": pd.Categorical.from_codes(np.asarray(columns["tenant"]).astype(np.int64),
                                            categories=list(tenant_names)),
        "request_id": np.asarray(columns["request_id"], dtype=np.uint64),
        "kernel_index": np.asarray(columns["kernel_index"], dtype=np.uint32),
        "device": _name_or_none(columns["device"], device_names),
        "start_ns": np.asarray(columns["start_ns"], dtype=np.int64),
        "finish_ns": np.asarray(columns["finish_ns"], dtype=np.int64),
    })


def _nan_below_zero(values) -> np.ndarray:
    """ns values with -1 (none) as NaN."""
    values = np.asarray(values, dtype=np.int64)
    return np.where(values >= 0, values.astype(np.float64), np.nan)


def _slos_frame(columns: dict, tenant_names, verdict_names=None) -> pd.DataFrame:
    """The /slos table: tenant, key, target_ns, value_ns, samples, low_ns, high_ns, verdict
    (categorical met / missed / inconclusive), met. Files written before verdicts had intervals
    have no samples / bounds / verdict: NaN, and the verdict from `met`."""
    met = np.asarray(columns["met"]).astype(bool)
    count = len(met)
    names = list(verdict_names or slo_verdict_names())
    if "verdict" in columns:
        codes = np.asarray(columns["verdict"]).astype(np.int64)
    else:
        codes = np.where(met, names.index("met"), names.index("missed"))
    missing = np.full(count, -1, dtype=np.int64)
    samples = np.asarray(columns.get("samples", missing), dtype=np.int64)
    return pd.DataFrame({
        "tenant": pd.Categorical.from_codes(np.asarray(columns["tenant"]).astype(np.int64),
                                            categories=list(tenant_names)),
        "key": [_text(k) for k in columns["key"]],
        "target_ns": np.asarray(columns["target_ns"], dtype=np.int64),
        "value_ns": _nan_below_zero(columns["value_ns"]),
        "samples": np.where(samples >= 0, samples.astype(np.float64), np.nan),
        "low_ns": _nan_below_zero(columns.get("low_ns", missing)),
        "high_ns": _nan_below_zero(columns.get("high_ns", missing)),
        "verdict": pd.Categorical.from_codes(codes, categories=names),
        "met": met,
    })


def _table_frame(rows: list[dict], units: dict | None = None) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    if "name" in frame.columns:
        frame = frame.set_index("name")
        frame.index.name = "name"
    # Summary statistics that do not apply when their count is 0 (no completed request, no LLM
    # tokens): NaN rather than 0. A group is every PREFIX_* column beside a PREFIX_count column.
    for count in [c for c in frame.columns if c.endswith("_count")]:
        prefix = count[:-len("count")]
        stats = [c for c in frame.columns if c.startswith(prefix) and c != count]
        frame[stats] = frame[stats].astype(np.float64)
        frame.loc[frame[count] == 0, stats] = np.nan
    # Confidence bounds the samples do not give (-1 in the file, None from the bindings): NaN.
    for bound in [c for c in frame.columns if c.endswith(("_low_ns", "_high_ns"))]:
        values = frame[bound].astype(np.float64)
        frame[bound] = values.where(values >= 0)
    # Verdict columns (metric type flag: 1 yes, 0 no, -1 not applicable): nullable booleans.
    for column, kind in (units or {}).items():
        if kind == "flag" and column in frame.columns:
            codes = frame[column].astype(np.int64)
            frame[column] = pd.array([None if c < 0 else bool(c) for c in codes], dtype="boolean")
    for column in _CATEGORICAL:
        if column in frame.columns:
            frame[column] = pd.Categorical(frame[column].map(_text),
                                           categories=list(dict.fromkeys(frame[column].map(_text))))
    return frame


class Result:
    """One simulation run. Build with :func:`gpumux.run` or :func:`gpumux.load`.

    Tables (``tenants``, ``requests``, ``timeseries``, ...) are built on first access and kept;
    later accesses return new frames over the same arrays without copying rows (see
    ``_frame``): add columns freely, ``.copy()`` before writing values in place."""

    def __init__(self, *, native=None, source=None):
        # Exactly one backing: `native` (gpumux._gpumux.RunResult) or `source` (an _H5Source).
        self._native = native
        self._source = source
        self._cache: dict[str, Any] = {}

    # -- construction helpers -------------------------------------------------------------
    @classmethod
    def _from_native(cls, native) -> "Result":
        return cls(native=native)

    @classmethod
    def _from_h5(cls, source) -> "Result":
        return cls(source=source)

    def _cached(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def _frame(self, key, build) -> pd.DataFrame:
        """The table ``key``, built once; each access returns a new frame over the same column
        arrays (``copy(deep=False)``: O(columns), no row is copied). Adding, dropping or
        renaming columns of the returned frame leaves later accesses as they were; writing
        values in place (``frame.loc[...] = ...``) writes the shared arrays, so ``.copy()``
        first to edit values."""
        return self._cached(key, build).copy(deep=False)

    # -- scalar properties ----------------------------------------------------------------
    @property
    def summary(self) -> dict:
        """The summary (docs/metrics.md; a fresh copy each time, so it may be modified freely)."""
        text = self._cached("summary_json", lambda: self._native.summary_json()
                            if self._native is not None else self._source.summary_json)
        return json.loads(text)

    @property
    def scenario_name(self) -> str:
        return self.summary["scenario"]

    @property
    def strategy(self) -> str | None:
        """The strategy label when the result comes from compare(), else None."""
        return self.summary.get("strategy")

    @property
    def seed(self) -> int:
        return int(self.summary["seed"])

    @property
    def status(self) -> str:
        """'complete' or 'interrupted'."""
        return self.summary["status"]

    @property
    def sim_time_ns(self) -> int:
        return int(self.summary["sim_time_ns"])

    @property
    def wall_s(self) -> float:
        return float(self.summary["wall_s"])

    @property
    def percentiles(self) -> dict:
        """How the percentiles were computed (docs/metrics.md): {"mode": "exact" | "sketch" |
        "auto", "method": "exact" | "sketch" | "mixed"} plus "relative_error" (the bound on
        |reported - exact| / |exact|), "sketched_series" and "series" when a sketch was used.
        Files written before the key existed had exact percentiles."""
        return dict(self.summary.get("percentiles", {"mode": "exact", "method": "exact"}))

    @property
    def scenario_yaml(self) -> str:
        """The resolved scenario (all defaults filled), as stored in the HDF5 file."""
        if self._native is not None:
            return self._native.scenario_yaml
        return self._source.scenario_yaml

    @property
    def calibration(self) -> dict:
        """Device profile name -> content hash of the calibration used."""
        if self._native is not None:
            return dict(self._native.calibration)
        return dict(self._source.calibration)

    @property
    def tenant_names(self) -> list[str]:
        """Tenant names in index order: name i is tenant index i of requests/events/kernels.
        From a file: its /tenant_names table (/tenants.name in older files)."""
        if self._source is not None and self._source.tenant_names is not None:
            return list(self._source.tenant_names)
        return list(self.summary["tenants"].keys())

    @property
    def device_names(self) -> list[str]:
        return list(self.summary["devices"].keys())

    # -- tables ---------------------------------------------------------------------------
    def _column_types(self, scope: str) -> dict:
        """Column -> metric type ("flag", "i64", ...) from the bindings' metric table; a file's
        int8 columns are flags too (the only int8 metric type)."""
        if self._native is not None:
            return {m["column"]: m["type"] for m in _metric_table() if m["scope"] == scope}
        return self._source.column_types(scope + "s")

    @property
    def tenants(self) -> pd.DataFrame:
        def build():
            rows = self._native.tenants() if self._native is not None else self._source.tenants()
            return _table_frame(rows, self._column_types("tenant"))
        return self._frame("tenants", build)

    @property
    def devices(self) -> pd.DataFrame:
        def build():
            rows = self._native.devices() if self._native is not None else self._source.devices()
            return _table_frame(rows, self._column_types("device"))
        return self._frame("devices", build)

    @property
    def slos(self) -> pd.DataFrame:
        """One row per SLO target of every tenant: tenant, key, target_ns, value_ns (the
        measured quantile), samples, low_ns and high_ns (its confidence interval at the run's
        ``percentiles.confidence``; NaN: no bound), verdict (met, missed, inconclusive) and met
        (verdict == met). The verdicts are the engine's (models/run/slo.hpp), as in the table,
        --json and --fail-on-slo."""
        def build():
            if self._native is not None:
                return _slos_frame(self._native.slos(), self.tenant_names)
            return _slos_frame(self._source.slos(), self.tenant_names,
                               self._source.enum_names("slos", "verdict"))
        return self._frame("slos", build)

    @property
    def metrics(self) -> pd.DataFrame:
        """Unit and description of every column of ``tenants`` and ``devices`` (index: table,
        column), from the file's attributes or the bindings' metric table."""
        def build():
            if self._native is not None:
                rows = [(m["scope"] + "s", m["column"], m["unit"], m["description"])
                        for m in _metric_table() if m["h5"]]
            else:
                rows = self._source.column_meta()
            frame = pd.DataFrame(rows, columns=["table", "column", "unit", "description"])
            return frame.set_index(["table", "column"])
        return self._frame("metrics", build)

    def _status_names(self):
        names = self._source.enum_names("requests", "status") if self._source is not None else None
        return names or request_status_names()

    def _kind_names(self):
        names = self._source.enum_names("events", "kind") if self._source is not None else None
        return names or event_kind_names()

    @property
    def requests(self) -> pd.DataFrame:
        def build():
            cols = self._native.requests() if self._native is not None else self._source.requests()
            return _requests_frame(cols, self.tenant_names, self._status_names())
        return self._frame("requests", build)

    @property
    def events(self) -> pd.DataFrame:
        def build():
            cols = self._native.events() if self._native is not None else self._source.events()
            return _events_frame(cols, self.tenant_names, self.device_names, self._kind_names())
        return self._frame("events", build)

    @property
    def timeseries(self) -> dict[str, pd.DataFrame]:
        def build():
            series = (self._native.timeseries() if self._native is not None
                      else self._source.timeseries())
            return {name: pd.DataFrame({
                "time_ns": np.asarray(cols["time_ns"], dtype=np.int64),
                "sm_busy": np.asarray(cols["sm_busy"], dtype=np.float64),
                "dram_busy": np.asarray(cols.get("dram_busy", np.full(len(cols["time_ns"]), np.nan)),
                                        dtype=np.float64),
                "memory_used_bytes": np.asarray(cols["memory_used_bytes"], dtype=np.int64),
            }) for name, cols in series.items()}
        return {k: v.copy(deep=False) for k, v in self._cached("timeseries", build).items()}

    @property
    def kernels(self) -> pd.DataFrame:
        def build():
            cols = self._native.kernels() if self._native is not None else self._source.kernels()
            return _kernels_frame(cols, self.tenant_names, self.device_names)
        return self._frame("kernels", build)

    # -- output ---------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """Writes the HDF5 result file (docs/metrics.md), the same file as ``gpumux run -o PATH``.

        A Result loaded from a single-run file is copied; one loaded from a compare file is
        extracted into a single-run file.
        """
        path = os.fspath(path)
        if self._native is not None:
            self._native.save(path)
        else:
            self._source.save(path)

    def table(self) -> str:
        """The text table ``gpumux run`` prints."""
        from . import _native_module
        return _native_module().summary_table_from_json(json.dumps(self.summary))

    def __repr__(self) -> str:
        s = self.summary
        parts = []
        for name, t in s.get("tenants", {}).items():
            lat = t.get("latency_ns", {})
            parts.append(f"{name}: p99={_fmt_ns(lat.get('p99'))} "
                         f"{t.get('throughput_per_s', 0):.4g}/s failed={t.get('failed', 0)}")
        label = f" [{s['strategy']}]" if s.get("strategy") else ""
        body = "; ".join(parts[:4]) + ("; ..." if len(parts) > 4 else "")
        return (f"<gpumux.Result {s.get('scenario')}{label} seed={s.get('seed')} "
                f"{s.get('status')} sim={s.get('sim_time_ns', 0) / 1e9:.3g}s "
                f"tenants={len(parts)} devices={len(s.get('devices', {}))}: {body}>")

    def _repr_html_(self) -> str:
        header = self.__repr__().replace("<", "&lt;").replace(">", "&gt;")
        cols = ["device", "requests", "completed", "failed", "latency_p50_ns", "latency_p99_ns",
                "throughput_per_s", "slowdown_mean", "oom_events"]
        tenants = self.tenants
        return (f"<p><code>{header}</code></p>"
                + tenants[[c for c in cols if c in tenants.columns]].to_html()
                + self.devices.to_html())


_METRIC_TABLE: list[dict] = []


def _metric_table() -> list[dict]:
    """The bindings' metric table (models/output/metric_table.hpp) as a list of dicts (read
    once; the table is fixed for the life of the module)."""
    if not _METRIC_TABLE:
        _METRIC_TABLE.extend(json.loads(_native().metric_table()))
    return _METRIC_TABLE


def metric_table() -> list[dict]:
    """The metric table as a list of dicts (a copy): what :func:`metrics` gives as a
    DataFrame, for code that builds its columns from it (compare, sweep, the HTML report)."""
    return [dict(m) for m in _metric_table()]


def metrics() -> pd.DataFrame:
    """Every metric gpumux reports: scope (tenant/device), column (HDF5, DataFrame), json (key
    path in the summary), unit, description, type, h5 (a column of the file's table), and how
    the CLI's tables show it: format, table (main, llm or ""), header, compare (its row in
    ``gpumux compare``), csv (its CSV column)."""
    return pd.DataFrame(_metric_table())


def _fmt_ns(value) -> str:
    if value is None:
        return "-"
    value = float(value)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}ns"
