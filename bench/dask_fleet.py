#!/usr/bin/env python3
"""Times a cluster scenario's workload pods on a Dask LocalCluster (docs/cluster.md, "Workload
pods on Dask"): the replay, every task's wall and CPU seconds and its worker's peak memory, and
the wall time projected for more workers from the tasks' CPU.

    PYTHONPATH=build/python:python /usr/bin/python3 bench/dask_fleet.py \
        scenarios/cluster/fleet-10240.yaml --duration 1h --workers 2 --shards 64 --project 24h

Projection (--project LENGTH): a task's CPU is a fixed part (loading the scenario and the
placement: an empty task, measured here) plus a part linear in the simulated time (the events
of its pods: their rates are constant, so launches grow with the length); the projected task is
fixed + linear x LENGTH / duration. On W workers the tasks are dealt Longest Processing Time
first (gpumux._dask_cluster.critical_path_s) after the replay of LENGTH (measured here).
Assumption: one worker per core, each as fast as this machine's core (CPU seconds, not wall:
the wall time here is inflated by other processes on a shared machine).
"""
from __future__ import annotations

import argparse
import json
import os
import time


def seconds(text: str) -> float:
    units = {"s": 1, "min": 60, "h": 3600, "d": 86400}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[:-len(unit)]) * units[unit]
    return float(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario")
    parser.add_argument("--duration", default="1h", help="cluster.duration of the measured run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shards", type=int, default=None, help="tasks (default 4 per worker)")
    parser.add_argument("--project", default=None, help="a length to project, e.g. 24h")
    parser.add_argument("--project-workers", default="16,64")
    args = parser.parse_args()

    import distributed
    import gpumux
    from gpumux import _dask_cluster, _gpumux

    path = os.path.abspath(args.scenario)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    overrides = [f"cluster.duration={args.duration}"]
    request = (text, False, overrides, path)
    out = {"scenario": args.scenario, "duration": args.duration, "workers": args.workers}
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        begin = time.perf_counter()
        result = gpumux.run(path, overrides=overrides, client=client, shards=args.shards)
        out["wall_s"] = time.perf_counter() - begin
    tasks = result.tasks
    out["replay_s"] = result.replay_s
    out["tasks"] = len(tasks)
    out["task_cpu_s_total"] = float(tasks["cpu_s"].sum())
    out["task_cpu_s_max"] = float(tasks["cpu_s"].max())
    out["task_wall_s_max"] = float(tasks["wall_s"].max())
    out["critical_path_s"] = result.critical_path_s
    out["peak_rss_mb_per_worker"] = {
        w: round(float(v) / 1e6, 1) for w, v in tasks.groupby("worker")["peak_rss_bytes"].max()
        .items()}
    out["estimated_launches"] = float(tasks["estimated_launches"].sum())
    completed = int(result.pods["workload_completed"].sum())
    out["requests_completed"] = completed
    if args.project:
        # The fixed part of a task: an empty task (load the scenario, decode the placement).
        replay = _gpumux.cluster_replay(*request)
        placement = replay.placement()
        cpu = time.process_time()
        _gpumux.simulate_cluster_nodes(*request, placement, [])
        fixed = time.process_time() - cpu
        scale = seconds(args.project) / seconds(args.duration)
        long_request = (text, False, [f"cluster.duration={args.project}"], path)
        cpu = time.process_time()
        _gpumux.cluster_replay(*long_request)
        long_replay = time.process_time() - cpu
        projected = [fixed + max(0.0, c - fixed) * scale for c in tasks["cpu_s"]]
        out["projection"] = {
            "length": args.project, "task_fixed_cpu_s": fixed, "replay_cpu_s": long_replay,
            "task_cpu_s_total": sum(projected),
            "wall_s": {w: _dask_cluster.critical_path_s(long_replay, projected, int(w))
                       for w in args.project_workers.split(",")}}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
