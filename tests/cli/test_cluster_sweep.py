"""gpumux.sweep over cluster scenarios (issue 8 item 5): one row per point x pod class, equal to
what gpumux.run gives for the same overrides, in grid order whatever runs it (one process or a
Dask LocalCluster); and the six openb variants x 3 scheduling policies through Dask."""
import math
import os

import pytest

import gpumux
from gpumux.sweep import CLUSTER_METRICS, cluster_rows

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STORY = os.path.join(ROOT, "scenarios", "cluster", "pending-gpu-available.yaml")
OPENB = os.path.join(ROOT, "scenarios", "cluster", "openb-default.yaml")
TRACES = os.path.join(ROOT, "scenarios", "traces", "alibaba-openb")
VARIANTS = ["default", "gpushare40", "gpushare100", "multigpu50", "gpuspec33", "cpu050"]
POLICIES = ["fgd", "best-fit", "first-fit"]


def _same(a, b):
    return (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)) \
        or a == b


def test_cluster_sweep_rows_are_what_run_gives():
    grid = {"cluster.scheduler.policy": POLICIES}
    frame = gpumux.sweep(STORY, grid, processes=1)
    assert list(frame.columns) == ["point", "policy", "status", "class", *CLUSTER_METRICS]
    for point, policy in enumerate(POLICIES):
        direct = gpumux.run(STORY, overrides={"cluster.scheduler.policy": policy})
        expected = cluster_rows(direct.summary)
        rows = frame[frame["point"] == point]
        assert len(rows) == len(expected) >= 2  # each class, then "all"
        for (_, got), want in zip(rows.iterrows(), expected):
            assert got["policy"] == policy
            assert str(got["class"]) == want["class"]
            for metric in CLUSTER_METRICS:
                assert _same(got[metric], want[metric]), (policy, want["class"], metric)
        # The classes' pods add up to the "all" row.
        classes = rows[rows["class"] != "all"]
        assert classes["pods"].sum() == rows[rows["class"] == "all"]["pods"].iloc[0]


def test_openb_variants_by_policy_on_a_dask_local_cluster():
    import dask.distributed as distributed  # python3-distributed (scripts/install-deps.sh)
    grid = {"cluster.openb.pods": [os.path.join(TRACES, f"openb_pod_list_{v}.csv")
                                   for v in VARIANTS],
            "cluster.scheduler.policy": POLICIES}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        frame = gpumux.sweep(OPENB, grid, client=client)
    overall = frame[frame["class"] == "all"]
    assert len(overall) == len(VARIANTS) * len(POLICIES)
    # Grid order: the pod list varies slowest, the policy fastest.
    assert list(overall["policy"].astype(str)) == POLICIES * len(VARIANTS)
    # The grid column of cluster.openb.pods is cluster_openb_pods (pods is a metric). Every pod of a
    # variant is counted whatever the policy; the variants differ; allocation is a fraction.
    assert "cluster_openb_pods" in overall.columns
    pods = overall.groupby("cluster_openb_pods", sort=False)["pods"]
    assert (pods.nunique() == 1).all() and pods.first().nunique() > 1
    assert ((overall["allocation_gpu_milli_final"] > 0) &
            (overall["allocation_gpu_milli_final"] <= 1)).all()
    # The same point run in this process gives the same row (a worker changes nothing).
    direct = gpumux.run(OPENB, overrides={"cluster.scheduler.policy": "best-fit"})
    want = cluster_rows(direct.summary)[-1]
    got = overall[overall["policy"] == "best-fit"].iloc[0]
    for metric in CLUSTER_METRICS:
        assert _same(got[metric], want[metric]), metric
