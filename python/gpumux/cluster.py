"""The result of a cluster replay (a scenario with a ``cluster:`` section; docs/cluster.md)."""
from __future__ import annotations

import json
from typing import Any

import pandas as pd


class ClusterResult:
    """What ``gpumux.run`` returns for a cluster scenario.

    summary:    the dict ``gpumux run --json`` prints (pending, allocation, fragmentation, cost,
                pending_reasons; docs/metrics.md "Cluster metrics").
    pods:       DataFrame, one row per pod (gang member): placement, times (ns; -1 = never),
                pending_reason; a workload pod's device, completed requests and latency
                (latency_p50_ns, _p90_, _p99_, _p999_, _max_, _mean_ns; -1 = no workload).
    latency_quantiles(qs, pods=None): any percentile of a pod, or of several pods' requests
                together, from their latency series (exact samples or sketch).
    timeseries: DataFrame, one row per sample: allocation, FGD fragmentation, unusable capacity,
                pending / running pods, active nodes.
    tasks:      with ``run(..., client=)``: one row per Dask task (node group): task, nodes,
                pods, estimated_launches, wall_s, cpu_s, worker; else None.
    replay_s, critical_path_s: with ``client=``: wall seconds of the load and replay, and of
                the replay plus the longest task (what no number of workers can beat); else
                None.
    """

    def __init__(self, native: dict):
        self.summary = json.loads(native["summary"])
        self.pods = pd.DataFrame(native["pods"])
        self.timeseries = pd.DataFrame(native["timeseries"])
        # Per pod: its latency series as bytes (b"": no workload; PodRecord::latency_series).
        self._latency_series = list(native.get("latency_series", []))
        self.tasks = None
        self.replay_s = None
        self.critical_path_s = None

    def __repr__(self) -> str:
        s = self.summary
        return (f"<gpumux.ClusterResult policy={s['policy']} pods={s['pods']} "
                f"allocation={s['allocation']['gpu_milli_final']:.3f}>")

    def latency_quantiles(self, quantiles, pods=None) -> dict:
        """Request latency (ns, nearest rank) at each of QUANTILES (in [0, 1]) over the
        workload pods PODS together: a row label of ``pods``, a list of them, or a boolean mask
        (e.g. ``r.pods["class"] == "chat"``); default every pod. Their latency series (the
        exact samples, or the sketch of ``cluster.percentiles``: within 1/256) are merged in
        row order, so one pod's p50 / p90 / p99 / p999 equal its latency_*_ns columns, and the
        answer is the same bit for bit however the pods were simulated (one process,
        ``--workers``, ``client=``). Returns {q: ns}, plus "count" (requests merged) and "exact"
        (False: a sketch). ValueError for a q outside [0, 1] or an unknown pod."""
        import numpy as np
        from gpumux import _gpumux
        qs = [float(q) for q in (quantiles if np.ndim(quantiles) else [quantiles])]
        count = len(self._latency_series)
        chosen = np.asarray([pods] if np.ndim(pods) == 0 and pods is not None else pods)
        rows: Any
        if pods is None:
            rows = range(count)
        elif chosen.dtype == bool:
            if len(chosen) != count:
                raise ValueError(f"a mask of {len(chosen)} rows for {count} pods")
            rows = np.flatnonzero(chosen)
        else:
            try:
                rows = [self.pods.index.get_loc(p) for p in chosen]
            except KeyError as error:
                raise ValueError(f"no pod row {error.args[0]!r}") from None
        merged = _gpumux.latency_series_quantiles([self._latency_series[i] for i in rows], qs)
        out: dict[Any, Any] = dict(zip(qs, merged["quantiles"]))
        out["count"] = merged["count"]
        out["exact"] = merged["exact"]
        return out
