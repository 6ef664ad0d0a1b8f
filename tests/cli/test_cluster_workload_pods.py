"""Workload pods through the CLI (issue 8): a pod with `workload:` runs through the device models
on the GPU it was placed on, from its start on, so its neighbours are the pods on that GPU at
the same time (scenarios/cluster/inference-pods-time-sliced.yaml)."""
import json
import subprocess
from pathlib import Path

from conftest import GPUMUX, run_gpumux

REPO = Path(__file__).resolve().parents[2]
SCENARIO = str(REPO / "scenarios" / "cluster" / "inference-pods-time-sliced.yaml")


def summary(*overrides):
    args = [GPUMUX, "run", SCENARIO, "--json"]
    for o in overrides:
        args += ["--set", o]
    out = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_neighbour_arriving_later_slows_the_inference_pod_only_while_there():
    shared = {p["pod"]: p for p in summary()["workload_pods"]}
    alone = {p["pod"]: p for p in summary("cluster.pods.1.arrival=90s")["workload_pods"]}
    assert set(shared) == {"chat", "trainer"} and set(alone) == {"chat"}  # 90 s: never placed
    assert shared["chat"]["device"] == shared["trainer"]["device"]  # time-sliced replicas
    # The same arrivals either way (one random stream per pod), slower with the neighbour.
    assert shared["chat"]["completed"] == alone["chat"]["completed"] > 0
    assert shared["chat"]["latency_p99_ns"] > alone["chat"]["latency_p99_ns"]
    # The trainer (closed loop, 30 ms steps alone) ran only from 20 s to the end at 60 s: at most
    # 40 s / 30 ms steps, and most of them (chat takes a small share of the GPU).
    steps = shared["trainer"]["completed"]
    assert 0.8 * 40 / 0.030 < steps <= 40 / 0.030


FLEET = str(REPO / "scenarios" / "cluster" / "fleet-1024.yaml")


def fleet(*args):
    out = run_gpumux("run", FLEET, "--json", "--set", "cluster.duration=2s", *args, timeout=600,
                     check=0)
    return json.loads(out.stdout)


def test_the_fleet_split_across_worker_processes_gives_every_pod_the_same_numbers():
    # scenarios/cluster/fleet-1024.yaml for 2 s: 1,024 GPUs, 3,296 pods, every one placed and
    # simulated on its GPUs; split by node into 3 worker processes, every pod's numbers equal.
    one = fleet()
    split = fleet("--workers", "3")
    assert one["pending"]["pods"] == 3296 and one["pending"]["never_started"] == 0
    assert len(one["workload_pods"]) == 3296
    assert sorted(one["workload_pods"], key=lambda p: p["pod"]) == \
        sorted(split["workload_pods"], key=lambda p: p["pod"])
    # ~10,300 requests/s for 2 s: every pod served some; the 2-GPU pods ran on both GPUs.
    assert 0.9 * 2 * 10304 < sum(p["completed"] for p in one["workload_pods"]) < 1.1 * 2 * 10304
    tp2 = [p for p in one["workload_pods"] if p["pod"].startswith("chat-tp2-")]
    assert len(tp2) == 32 and all(p["device"].count(",") == 1 for p in tp2)


def test_workers_out_of_range_is_one_line_exit_2():
    out = run_gpumux("run", SCENARIO, "--workers", "0", timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == ["gpumux: error: --workers: 0 is not in 1..1024"]


def test_workers_on_a_scenario_without_a_cluster_is_one_line_exit_2():
    out = run_gpumux("run", REPO / "scenarios" / "quickstart.yaml", "--workers", "2", timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines()[-1] == \
        "gpumux: error: --workers: only for a scenario with a `cluster:` section"
