"""Reading HDF5 result files (docs/metrics.md) written by ``gpumux run -o`` / ``compare -o`` or
:meth:`Result.save`, with h5py. The whole file is read when loaded (no file handle is kept)."""
from __future__ import annotations

import json
import os
import shutil
import tempfile

import h5py
import numpy as np

from .result import Result, _text

_TABLES = ("requests", "tenants", "devices", "events", "kernels", "slos")
_RUN_ATTRIBUTES = ("scenario", "seed", "status", "sim_time_ns", "events", "wall_s", "strategy")


#: Columns each reader takes from a table (the others are read by name when present).
_REQUIRED_COLUMNS = {"requests": ("tenant", "request_id", "arrival_ns", "start_ns", "finish_ns",
                                  "status"),
                     "events": ("time_ns", "kind", "tenant", "device")}


def _bad_layout(path, what):
    return ValueError(f"{path}: not a gpumux result file ({what})")


def _check_layout(path, group):
    """ValueError naming PATH and the object when GROUP's tables are not what gpumux writes: each
    of _TABLES present is a one-dimensional dataset of records (with the columns the readers
    take), /tenant_names one of strings, /timeseries a group of record datasets. Cost: reads
    dtypes and shapes only, and /tenant_names."""
    prefix = "" if group.name == "/" else group.name
    for name in _TABLES:
        if name not in group:
            continue
        table = group[name]
        where = f"{prefix}/{name}"
        if not isinstance(table, h5py.Dataset) or table.dtype.names is None or table.ndim != 1:
            raise _bad_layout(path, f"{where} is not a table of records")
        missing = [c for c in _REQUIRED_COLUMNS.get(name, ()) if c not in table.dtype.names]
        if missing:
            raise _bad_layout(path, f"{where} has no column {missing[0]!r}")
    if "tenant_names" in group:
        names = group["tenant_names"]
        if (not isinstance(names, h5py.Dataset) or names.ndim != 1
                or names.dtype.kind not in "OSU"):
            raise _bad_layout(path, f"{prefix}/tenant_names is not a list of names")
    if "timeseries" in group:
        series = group["timeseries"]
        if not isinstance(series, h5py.Group):
            raise _bad_layout(path, f"{prefix}/timeseries is not a group of device series")
        for key, dataset in series.items():
            if (not isinstance(dataset, h5py.Dataset) or dataset.dtype.names is None
                    or dataset.ndim != 1):
                raise _bad_layout(path, f"{prefix}/timeseries/{key} is not a table of records")


class _H5Source:
    """One run's data read from a result file (the root of a single-run file, or one
    /strategies/<label> group of a compare file)."""

    def __init__(self, path, root, group, summary_json):
        _check_layout(path, group)
        self.path = path
        self.group_name = group.name
        self.summary_json = summary_json
        self.scenario_yaml = _text(root.attrs.get("scenario_yaml", ""))
        try:
            self.calibration = json.loads(_text(root.attrs.get("calibration", "{}")))
        except ValueError:
            self.calibration = {}
        self._tables = {name: group[name][()] if name in group else None for name in _TABLES}
        self._units, self._descriptions = {}, {}
        for name in ("tenants", "devices"):
            attrs = group[name].attrs if name in group else {}
            self._units[name] = json.loads(_text(attrs.get("units", "{}")))
            self._descriptions[name] = json.loads(_text(attrs.get("description", "{}")))
        self.tenant_names = self._read_tenant_names(group)
        self._timeseries = {}
        if "timeseries" in group:
            for key, dataset in group["timeseries"].items():
                name = _text(dataset.attrs.get("device", key))
                self._timeseries[name] = dataset[()]

    def _read_tenant_names(self, group):
        """Tenant index -> name: the /tenant_names dataset, or, in files written before it
        existed, the name column of /tenants (same order). None when neither is there."""
        if "tenant_names" in group:
            return [_text(name) for name in group["tenant_names"][()]]
        table = self._tables["tenants"]
        if table is not None and "name" in (table.dtype.names or ()):
            return [_text(name) for name in table["name"]]
        return None

    @staticmethod
    def _rows(table):
        if table is None:
            return []
        rows = []
        for record in table:
            row = {}
            for field in table.dtype.names:
                value = record[field]
                if isinstance(value, (bytes, np.bytes_)):
                    value = _text(value)
                elif isinstance(value, np.generic):
                    value = value.item()
                row[field] = value
            rows.append(row)
        return rows

    @staticmethod
    def _columns(table, names):
        if table is None:
            return {n: np.array([], dtype=np.int64) for n in names}
        return {n: table[n] for n in names}

    def enum_names(self, table, column):
        """Names by code of an HDF5 enum column (the file's own list), or None."""
        data = self._tables.get(table)
        if data is None or column not in (data.dtype.names or ()):
            return None
        mapping = h5py.check_enum_dtype(data.dtype[column])
        if not mapping:
            return None
        return tuple(name for name, _ in sorted(mapping.items(), key=lambda kv: kv[1]))

    def column_types(self, table):
        """Column -> "flag" for the int8 verdict columns of TABLE (the others: their dtype)."""
        data = self._tables.get(table)
        if data is None:
            return {}
        return {name: "flag" if data.dtype[name] == np.int8 else str(data.dtype[name])
                for name in data.dtype.names}

    def column_meta(self):
        """(table, column, unit, description) of /tenants and /devices, from their attributes."""
        return [(table, column, unit, self._descriptions[table].get(column, ""))
                for table in ("tenants", "devices")
                for column, unit in self._units[table].items()]

    def tenants(self):
        return self._rows(self._tables["tenants"])

    def slos(self):
        table = self._tables["slos"]
        if table is None:  # files written before SLO verdicts existed
            return {"tenant": [], "key": [], "target_ns": [], "value_ns": [], "met": []}
        return {n: table[n] for n in table.dtype.names}

    def devices(self):
        return self._rows(self._tables["devices"])

    def requests(self):
        return self._columns(self._tables["requests"],
                             ["tenant", "request_id", "arrival_ns", "start_ns", "finish_ns",
                              "status"])

    def events(self):
        out = self._columns(self._tables["events"], ["time_ns", "kind", "tenant", "device"])
        table = self._tables["events"]
        out["detail"] = [] if table is None else [_text(d) for d in table["detail"]]
        return out

    def kernels(self):
        table = self._tables["kernels"]
        if table is None:
            return None
        return {n: table[n] for n in table.dtype.names}

    def timeseries(self):
        # dram_busy is absent from files written before it existed.
        return {name: {n: table[n] for n in ("time_ns", "sm_busy", "dram_busy",
                                             "memory_used_bytes")
                       if n in table.dtype.names}
                for name, table in self._timeseries.items()}

    def save(self, path):
        """Copies this run into a single-run result file, written atomically."""
        folder = os.path.dirname(os.path.abspath(path)) or "."
        try:
            fd, temp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", dir=folder)
        except OSError as e:
            from . import ScenarioError  # a write failure is the user's to fix, as in the CLI
            raise ScenarioError(f"{path}: cannot write the result file: {e.strerror}") from None
        os.close(fd)
        try:
            if self.group_name == "/":
                shutil.copyfile(self.path, temp)
            else:
                with h5py.File(self.path, "r") as src, h5py.File(temp, "w") as dst:
                    for key, value in src.attrs.items():
                        if key != "strategies":
                            dst.attrs[key] = value
                    group = src[self.group_name]
                    for key in _RUN_ATTRIBUTES:
                        if key in group.attrs:
                            dst.attrs[key] = group.attrs[key]
                    dst.create_dataset("summary", data=self.summary_json,
                                       dtype=h5py.string_dtype("utf-8"))
                    for name in (*_TABLES, "tenant_names", "timeseries"):
                        if name in group:
                            src.copy(group[name], dst, name=name)
            os.replace(temp, path)
        except BaseException as e:
            if os.path.exists(temp):
                os.remove(temp)
            if isinstance(e, OSError):
                from . import ScenarioError
                raise ScenarioError(f"{path}: cannot write the result file: "
                                    f"{e.strerror or e}") from None
            raise


def _summaries(path, file):
    if "summary" not in file:
        raise ValueError(f"{path}: not a gpumux result file (no /summary dataset)")
    try:
        parsed = json.loads(_text(file["summary"][()]))
    except ValueError as e:
        raise ValueError(f"{path}: not a gpumux result file (/summary is not JSON)") from e
    return parsed


def load(path: str | os.PathLike[str], strategy: str | None = None) -> Result | list[Result]:
    """Reads a result file.

    A single-run file (``gpumux run -o``, :meth:`Result.save`) gives a :class:`Result`.
    A compare file (``gpumux compare -o``, :func:`gpumux.save_compare`) gives a list of Results,
    one per strategy in the file's order (each ``.strategy`` set), or, with
    ``strategy="mps"``, just that one. Note a compare file stores one ``scenario_yaml``
    (the first strategy's); every Result loaded from it reports that one.
    Raises FileNotFoundError, or ValueError when the file is not a gpumux result file or is a
    cluster replay's (``gpumux run -o`` of a ``cluster:`` scenario: read /cluster with h5py).
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    if not h5py.is_hdf5(path):
        raise ValueError(f"{path}: not a gpumux result file (not an HDF5 file)")
    try:
        opened = h5py.File(path, "r")
    except OSError as e:  # an HDF5 signature but a file cut short (a copy or a run killed)
        raise ValueError(f"{path}: not a gpumux result file (cannot open: "
                         f"{str(e).splitlines()[0] if str(e) else type(e).__name__})") from None
    with opened as file:
        parsed = _summaries(path, file)
        if isinstance(parsed, dict) and parsed.get("kind") == "cluster":
            # As the CLI's report --html / plot: a Result of it had no tenants, and .requests,
            # .slos, .events raised KeyError 'tenants'.
            raise ValueError(f"{path}: gpumux.load reads device results, and this is a cluster "
                             "replay's file (kind cluster): `gpumux report` prints its summary; "
                             "its tables are under /cluster (docs/cluster.md)")
        if isinstance(parsed, dict):
            if strategy is not None and parsed.get("strategy") != strategy:
                raise ValueError(f"{path}: a single-run file (strategy "
                                 f"{parsed.get('strategy')!r}), not {strategy!r}")
            return Result._from_h5(_H5Source(path, file, file, json.dumps(parsed)))
        if not isinstance(parsed, list) or not parsed or "strategies" not in file:
            raise ValueError(f"{path}: not a gpumux result file (unexpected /summary)")
        if not isinstance(file["strategies"], h5py.Group):
            raise _bad_layout(path, "/strategies is not a group")
        groups = {}
        for key, group in file["strategies"].items():
            if not isinstance(group, h5py.Group):
                raise _bad_layout(path, f"/strategies/{key} is not a group")
            groups[_text(group.attrs.get("strategy", key))] = group
        try:
            labels = json.loads(_text(file.attrs.get("strategies", "[]"))) or list(groups)
        except ValueError:
            labels = None
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise _bad_layout(path, "the strategies attribute is not a JSON list of names")
        results = []
        for label, summary in zip(labels, parsed):
            if strategy is not None and label != strategy:
                continue
            if label not in groups:
                raise ValueError(f"{path}: compare file has no group for strategy {label!r}")
            results.append(Result._from_h5(
                _H5Source(path, file, groups[label], json.dumps(summary))))
        if strategy is not None:
            if not results:
                raise ValueError(f"{path}: no strategy {strategy!r} (has: {', '.join(labels)})")
            return results[0]
        return results
