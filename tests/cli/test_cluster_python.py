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
