"""gpumux.run on a cluster scenario returns a ClusterResult whose summary is the CLI's --json
and whose frames hold one row per pod and per sample."""
import importlib
import json
from pathlib import Path

import pytest

from conftest import run_gpumux

gpumux = pytest.importorskip("gpumux")
if not hasattr(gpumux, "run"):
    pytest.skip("gpumux package: put python/ on PYTHONPATH too", allow_module_level=True)

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "cluster" / "pending-gpu-available.yaml"


def test_run_returns_cluster_frames_matching_the_cli():
    r = gpumux.run(str(SCENARIO))
    assert isinstance(r, gpumux.ClusterResult)
    cli = run_gpumux("run", SCENARIO, "--json", timeout=120)
    assert cli.returncode == 0, cli.stderr
    assert r.summary == json.loads(cli.stdout)
    assert list(r.pods["name"]) == ["notebook-0", "notebook-1", "train"]
    train = r.pods.set_index("name").loc["train"]
    assert train["pending_reason"] == "fragmented"
    assert (r.timeseries["gpu_milli_allocated"] <= r.timeseries["gpu_milli_total"]).all()


def test_overrides_reach_the_cluster_section():
    r = gpumux.run(str(SCENARIO), overrides={"cluster.scheduler.policy": "best-fit"})
    assert r.summary["policy"] == "best-fit"
    assert (r.pods["pending_reason"] == "").all()


def test_sweep_of_a_cluster_scenario_gives_a_row_per_point_and_pod_class():
    grid = {"cluster.scheduler.policy": ["worst-fit", "best-fit"]}
    frame = gpumux.sweep(str(SCENARIO), grid, processes=1)
    for column in importlib.import_module("gpumux.sweep").CLUSTER_METRICS:
        assert column in frame
    overall = frame[frame["class"] == "all"]
    assert list(overall["policy"].astype(str)) == ["worst-fit", "best-fit"]
    # Spreading leaves the 2-GPU pod waiting 7,140 s; packing starts it at once.
    assert list(overall["pending_p99_s"]) == [7140.0, 0.0]
    training = frame[frame["class"] == "training"]
    assert list(training["pending_max_s"]) == [7140.0, 0.0]


def test_latency_quantiles_give_any_percentile_of_pods_and_their_merge():
    """Each workload pod's latency series (exact here): its reported percentiles come back from
    it, any other q too, and a merge of pods lies between its members' own quantiles (nearest
    rank over a union); bad arguments are one ValueError."""
    fleet = str(REPO / "scenarios" / "cluster" / "fleet-16.yaml")
    r = gpumux.run(fleet, overrides={"cluster.percentiles": "exact"})
    pods = r.pods.index[r.pods["workload_device"] != ""]
    assert len(pods) == 24
    qs = [0.25, 0.5, 0.9, 0.99, 0.999, 1.0]
    per_pod = {}
    for pod in pods:
        got = r.latency_quantiles(qs, pods=pod)
        row = r.pods.loc[pod]
        assert got["exact"] and got["count"] == row["workload_completed"] > 100
        assert [got[q] for q in qs[1:]] == [row["latency_p50_ns"], row["latency_p90_ns"],
                                            row["latency_p99_ns"], row["latency_p999_ns"],
                                            row["latency_max_ns"]]
        assert got[0.25] <= got[0.5]
        per_pod[pod] = got
    for name in set(r.pods.loc[pods, "class"]):
        members = [p for p in pods if r.pods.loc[p, "class"] == name]
        merged = r.latency_quantiles(qs, pods=r.pods["class"] == name)
        assert merged == r.latency_quantiles(qs, pods=members)
        assert merged["count"] == sum(per_pod[p]["count"] for p in members)
        for q in qs:
            assert min(per_pod[p][q] for p in members) <= merged[q] <= \
                max(per_pod[p][q] for p in members)
    for bad, line in [(dict(quantiles=1.5), "quantiles must be in [0, 1]"),
                      (dict(quantiles=0.5, pods="nope"), "no pod row 'nope'"),
                      (dict(quantiles=0.5, pods=[True, False]), "a mask of 2 rows for")]:
        with pytest.raises(ValueError, match=line.replace("[", r"\[").replace("]", r"\]")):
            r.latency_quantiles(**bad)
