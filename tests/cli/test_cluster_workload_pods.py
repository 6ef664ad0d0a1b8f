"""Workload pods through the CLI (issue 8): a pod with `workload:` runs through the device models
on the GPU it was placed on, from its start on, so its neighbours are the pods on that GPU at
the same time (scenarios/cluster/inference-pods-time-sliced.yaml)."""
import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GPUMUX = str(Path(os.environ.get("GPUMUX_BIN") or REPO / "build" / "gpumux").resolve())
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
