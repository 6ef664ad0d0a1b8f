"""Issue 35's blocking problems 2-4 and the inconclusive wording, through the CLI ($GPUMUX_BIN):
a GKE plan never shares an isolated tenant's GPU, gives every time-shared Pod a GPU-memory
budget and holds for any assignment of a pool's pods to its devices (each order replays with
its SLOs met); the cluster replay judges SLOs (--fail-on-slo); a pod asking two time-shared
GPUs fails at admission; an inconclusive verdict says so and what decides it."""
import functools
import json
import re

import h5py
import pytest
import yaml
from pathlib import Path

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]
gpumux = functools.partial(run_gpumux, timeout=600)


# Small tenants that time-share well, and one (`kv`) whose memory must not be shared: on GKE
# the cheapest plan used to put it alone on one GPU of a time-sharing node whose other slot any
# pod of the pool could take.
ISOLATED = """\
name: gke-isolated
seed: 5
duration: 3s
warmup: 300ms
plan:
  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0}]
  max_gpus: 3
  platform: gke
  machines: [a3-highgpu-1g, a3-highgpu-2g]
  strategies: [dedicated, time-slicing]
tenants:
  - name: kv
    memory: 30GiB
    isolation: memory
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request:
        kernels:
          - {name: step, duration: 1ms, sm_fraction: 0.4, memory_bound: 0.5}
    slo: {p99: 40ms}
  - name: embed
    memory: 4GiB
    workload:
      arrivals: {process: poisson, rate: 200/s}
      request:
        kernels:
          - {name: enc, duration: 300us, sm_fraction: 0.4, memory_bound: 0.5, repeat: 2}
    slo: {p99: 20ms}
  - name: rerank
    memory: 6GiB
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request:
        kernels:
          - {name: score, duration: 1ms, sm_fraction: 0.5, memory_bound: 0.3}
    slo: {p99: 40ms}
"""


@pytest.fixture(scope="module")
def gke_plan(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gke")
    path = tmp / "isolated.yaml"
    path.write_text(ISOLATED)
    out = tmp / "deploy"
    gpumux("plan", str(path), "-o", str(out), check=0)
    plan = json.loads(gpumux("plan", str(path), "--json", check=0).stdout)
    return out, plan


def test_isolated_tenant_never_on_a_shared_node_and_budgets(gke_plan):
    out, plan = gke_plan
    best = plan["ranked"][0]
    assert best["feasible"]
    for node in best["nodes"]:
        if node["clients"] > 0:  # time-sharing: any pod of the pool may take any slot
            assert "kv" not in node["pod_order"], node
    for manifest in (out / "pods").iterdir():
        text = manifest.read_text()
        assert "file order" not in text and "in order" not in text
        pod = yaml.safe_load(text)
        shared = "cloud.google.com/gke-max-shared-clients-per-gpu" in pod["spec"]["nodeSelector"]
        env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0].get("env", [])}
        if shared:  # a time-shared pod carries its budget: its memory, as a fraction too
            assert int(env["GPUMUX_GPU_MEMORY_BUDGET_MIB"]) > 0
            assert 0 < float(env["GPUMUX_GPU_MEMORY_FRACTION"]) < 1
        else:
            assert not env


def test_plan_holds_for_every_pod_order(gke_plan):
    """The replay gives each order of the pods its own device assignment (the device plugin
    law); every order meets every SLO: --fail-on-slo exits 0."""
    out, _ = gke_plan
    cluster = yaml.safe_load((out / "cluster.yaml").read_text())
    pods = cluster["cluster"]["pods"]
    orders = [pods, list(reversed(pods)), pods[1:] + pods[:1], pods[2:] + pods[:2]]
    for k, order in enumerate(orders):
        cluster["cluster"]["pods"] = order
        path = out / f"order-{k}.yaml"
        path.write_text(yaml.safe_dump(cluster, sort_keys=False))
        proc = gpumux("run", str(path), "--fail-on-slo", "--json")
        assert proc.returncode == 0, (k, proc.stderr)
        replay = json.loads(proc.stdout)
        assert replay["workload_slos"]["missed"] == 0
        path.unlink()


CLUSTER = """\
name: slo-replay
seed: 3
cluster:
  duration: 20s
  warmup: 300ms
  pools:
    - {name: a, count: 1, gpu: h100-sxm-80gb, gpus_per_node: 1}
  pods:
    - name: svc
      arrival: 0s
      requests: {nvidia.com/gpu: 1}
      workload:
        memory: 4GiB
        workload:
          arrivals: {process: poisson, rate: 200/s}
          request:
            kernels:
              - {name: k, duration: 300us, sm_fraction: 0.4, memory_bound: 0.5}
        slo: {p99: TARGET}
"""


@pytest.mark.parametrize("target, code, verdict", [("1us", 1, "missed"), ("10s", 0, "met")])
def test_cluster_replay_judges_slos(tmp_path, target, code, verdict):
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER.replace("TARGET", target))
    proc = gpumux("run", str(path), "--fail-on-slo")
    assert proc.returncode == code, proc.stderr
    assert re.search(r"svc .* " + verdict + r"\b", proc.stdout), proc.stdout
    replay = json.loads(gpumux("run", str(path), "--json", check=0).stdout)
    (pod,) = replay["workload_pods"]
    assert pod["slo_verdict"] == verdict and pod["slo"]["p99"]["verdict"] == verdict
    check = pod["slo"]["p99"]
    assert check["low_ns"] <= check["value_ns"]
    assert check["high_ns"] is None or check["value_ns"] <= check["high_ns"]
    assert replay["workload_slos"][verdict] == 1
    if code:
        assert "SLO missed: pod svc p99" in proc.stderr


TWO_SHARED = """\
name: two-shared
seed: 1
cluster:
  duration: 60s
  pools:
    - name: ts
      count: 1
      gpu: h100-sxm-80gb
      gpus_per_node: 2
      sharing: {gke: {gpu-sharing-strategy: time-sharing, max-shared-clients-per-gpu: 10}}
  pods:
    - {name: two, arrival: 5s, duration: 30s, requests: {nvidia.com/gpu: 2}}
    - {name: one, arrival: 6s, duration: 30s, requests: {nvidia.com/gpu: 1}}
"""


def test_two_time_shared_gpus_fail_at_admission(tmp_path):
    """GKE binds the pod (20 replicas advertised), then its kubelet fails it:
    UnexpectedAdmissionError at its arrival, in the table, the JSON and the HDF5 file alike."""
    path = tmp_path / "two.yaml"
    path.write_text(TWO_SHARED)
    out = tmp_path / "two.h5"
    proc = gpumux("run", str(path), "-o", str(out), check=0)
    assert "failed at admission" in proc.stdout and "UnexpectedAdmissionError" in proc.stdout
    assert "Insufficient nvidia.com/gpu" not in proc.stdout
    replay = json.loads(gpumux("run", str(path), "--json", check=0).stdout)
    assert replay["failed_at_admission"] == 1 and replay["never_started"] == 0
    assert replay["pending_reasons"] == []
    assert "maximum request size for shared resources is 1" in \
        replay["admission_failures"][0]["reason"]
    with h5py.File(out) as f:
        pods = {row["name"].decode(): row for row in f["cluster/pods"][()]}
    assert pods["two"]["failed_at_ns"] == 5_000_000_000 and pods["two"]["start_ns"] == -1
    assert pods["two"]["pending_reason"].decode() == "UnexpectedAdmissionError"
    assert pods["one"]["start_ns"] == 6_000_000_000 and pods["one"]["failed_at_ns"] == -1


SHORT = """\
name: short
seed: 2
duration: 400ms
warmup: 100ms
gpus: [{name: g, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: g
    memory: 2GiB
    workload:
      arrivals: {process: poisson, rate: 200/s}
      request:
        kernels:
          - {name: k, duration: 200us, sm_fraction: 0.3, memory_bound: 0.5}
    slo: {p99: 100ms}
"""


def test_inconclusive_says_what_decides_it(tmp_path):
    """60 requests cannot bound a p99: the table says inconclusive, not 0/1 met, and names a
    duration; at that duration the verdict is decided."""
    path = tmp_path / "short.yaml"
    path.write_text(SHORT)
    text = gpumux("run", str(path), check=0).stdout
    match = re.search(r"0 met, 0 missed, 1 inconclusive \(run longer: --set duration=(\S+)\)",
                      text)
    assert match, text
    compare = gpumux("compare", str(path), "--strategies", "time-slicing", check=0).stdout
    assert "inconcl." in compare and "1 inconclusive (run longer" in compare
    longer = json.loads(gpumux("run", str(path), "--set", f"duration={match.group(1)}",
                               "--json", check=0).stdout)
    assert longer["tenants"]["t"]["slo_verdict"] == "met"


UNDECIDED = """\
name: undecided
seed: 3
duration: 4s
warmup: 500ms
plan:
  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0}]
  max_gpus: 1
  max_duration: 4s
tenants:
  - name: rare
    memory: 4GiB
    workload:
      arrivals: {process: poisson, rate: 2/s}
      request:
        kernels:
          - {name: k, duration: 300us, sm_fraction: 0.5, memory_bound: 0.5}
    slo: {p99: 1s}
"""


def test_plan_does_not_call_inconclusive_a_failure(tmp_path):
    """7 requests cannot bound a p99 far under its target: no answer, but no 'fails' either."""
    path = tmp_path / "undecided.yaml"
    path.write_text(UNDECIDED)
    proc = gpumux("plan", str(path))
    assert proc.returncode == 1, proc.stderr
    assert "fail(s) even alone" not in proc.stdout
    assert "note: rare is inconclusive alone, not failing" in proc.stdout, proc.stdout
