"""The result of a cluster replay (a scenario with a ``cluster:`` section; docs/cluster.md)."""
from __future__ import annotations

import json

import pandas as pd


class ClusterResult:
    """What ``gpumux.run`` returns for a cluster scenario.

    summary:    the dict ``gpumux run --json`` prints (pending, allocation, fragmentation, cost,
                pending_reasons; docs/metrics.md "Cluster metrics").
    pods:       DataFrame, one row per pod (gang member): placement, times (ns; -1 = never),
                pending_reason.
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
        self.tasks = None
        self.replay_s = None
        self.critical_path_s = None

    def __repr__(self) -> str:
        s = self.summary
        return (f"<gpumux.ClusterResult policy={s['policy']} pods={s['pods']} "
                f"allocation={s['allocation']['gpu_milli_final']:.3f}>")
