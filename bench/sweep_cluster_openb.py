"""The six openb pod lists x 3 scheduling policies through gpumux.sweep on a Dask LocalCluster
(issue 8): prints the wall time and the allocation / failed-pod tables.

    PYTHONPATH=build/python:python python3 bench/sweep_cluster_openb.py [WORKERS]

Measured 2026-12-01 on the 2-core development machine (shared): 18 points in 12.4 s with 2
workers (docs/cluster.md)."""
import sys
import time
from pathlib import Path

import gpumux

REPO = Path(__file__).resolve().parents[1]
TRACES = REPO / "scenarios" / "traces" / "alibaba-openb"
VARIANTS = ["default", "gpushare40", "gpushare100", "multigpu50", "gpuspec33", "cpu050"]


def main():
    from dask.distributed import Client, LocalCluster
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    grid = {"cluster.openb.pods": [str(TRACES / f"openb_pod_list_{v}.csv") for v in VARIANTS],
            "cluster.scheduler.policy": ["fgd", "best-fit", "first-fit"]}
    t0 = time.time()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True) as cluster, \
            Client(cluster) as client:
        frame = gpumux.sweep(str(REPO / "scenarios" / "cluster" / "openb-default.yaml"), grid,
                             client=client)
    overall = frame[frame["class"] == "all"].copy()  # one row per point (and one per class)
    print(f"{len(overall)} points in {time.time() - t0:.1f} s on a {workers}-worker LocalCluster")
    overall["pods"] = overall["cluster_openb_pods"].astype(str).str.extract(
        r"openb_pod_list_(\w+)\.csv")[0]
    print(overall.pivot_table(index="pods", columns="policy",
                              values="allocation_gpu_milli_final").round(4))
    print(overall.pivot_table(index="pods", columns="policy", values="failed_on_arrival"))


if __name__ == "__main__":
    main()
