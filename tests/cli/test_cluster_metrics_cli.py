"""Issue 24's misleading cluster numbers, through the CLI (`gpumux run FILE --json`): a pod that
never starts is censored at the end of the replay, the autoscaler sizes a scale-up for all the
pending pods, an idle cluster has no fragmentation, the cluster section reads sizes as the tenant
section does, and MIG cost shares are GPU slices over seven in both sections.
Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import json
from pathlib import Path

import pytest

from conftest import run_gpumux

REPO = Path(__file__).resolve().parents[2]

# One 1-GPU node held by `hog` for 2 h; two more 1-GPU pods ask at 10 min; the replay ends at 1 h.
BUSY = """name: busy
cluster:
  pools:
    - {name: p, count: 1, gpu: a100-80gb, gpus_per_node: 1, cpu: "64", memory: 256Gi,
       cost_per_hour: 8AUTOSCALING}
  duration: 1h
  pods:
    - {name: hog, arrival: 0s, requests: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}, duration: 2h}
    - {name: late, class: late, arrival: 10min, count: 2,
       requests: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}, duration: 10min}
"""


def run(tmp_path, text, *args):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    r = run_gpumux("run", path, "--json", *args, timeout=600, check=0)
    return json.loads(r.stdout)


def test_a_pod_that_never_starts_is_censored_not_zero(tmp_path):
    s = run(tmp_path, BUSY.replace("AUTOSCALING", ""))
    late = next(c for c in s["classes"] if c["class"] == "late")
    assert late["censored"] == 2 and late["started"] == 0
    assert late["pending_p50_s"] == 3000.0 and late["pending_p50_censored"] is True
    assert s["pending"]["censored"] == 2 and s["pending"]["pending_max_censored"] is True
    hog = next(c for c in s["classes"] if c["class"] == "hog")
    assert hog["pending_p50_s"] == 0.0 and hog["pending_p50_censored"] is False
    table = run_gpumux("run", tmp_path / "s.yaml").stdout
    assert ">=50m" in table and "2 pod(s) had not started by the end" in table


def test_two_pending_pods_with_max_3_get_two_nodes(tmp_path):
    s = run(tmp_path, BUSY.replace(
        "AUTOSCALING", ",\n       autoscaling: {min: 1, max: 3, provisioning_delay: 2min}"))
    (pool,) = s["cost"]["pools"]
    assert (pool["scale_ups"], pool["nodes_peak"]) == (2, 3)
    late = next(c for c in s["classes"] if c["class"] == "late")
    assert late["started"] == 2 and late["pending_max_s"] == pytest.approx(120.0)
    assert late["pending_max_censored"] is False


@pytest.mark.parametrize("expander,grown", [("least-waste", "small"), ("first", "big"),
                                            ("priority", "big")])
def test_expanders_choose_the_pool(tmp_path, expander, grown):
    text = """name: expanders
cluster:
  pools:
    - {name: big, count: 0, gpu: a100-80gb, gpus_per_node: 8, cpu: "96", memory: 1Ti,
       autoscaling: {min: 0, max: 2}}
    - {name: small, count: 0, gpu: a100-80gb, gpus_per_node: 1, cpu: "8", memory: 32GiB,
       autoscaling: {min: 0, max: 2}}
  autoscaler: {expander: EXPANDER, priorities: {10: ["^small$"], 50: ["^b"]}}
  pods:
    - {name: x, requests: {cpu: 4, memory: 16GB, nvidia.com/gpu: 1}, duration: 1min}
""".replace("EXPANDER", expander)
    pools = {p["pool"]: p["scale_ups"] for p in run(tmp_path, text)["cost"]["pools"]}
    assert pools[grown] == 1 and sum(pools.values()) == 1


def test_an_idle_cluster_has_no_fragmentation(tmp_path):
    text = """name: idle
cluster:
  pools:
    - {name: p, count: 1, gpu: a100-80gb, gpus_per_node: 2, cpu: "64", memory: 256Gi}
  scheduler: {policy: fgd}
  duration: 1h
  pods:
    - {name: one, requests: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 1}, duration: 10min}
    - {name: cpu, count: 3, requests: {cpu: 1, memory: 1Gi}, duration: 10min}
"""
    f = run(tmp_path, text)["fragmentation"]
    assert f["fgd_final_milli"] == 0.0 and f["fgd_final_ratio"] == 0.0


def test_the_cluster_section_reads_sizes_and_rates_as_tenants_write_them(tmp_path):
    text = """name: units
cluster:
  pools:
    - {name: p, count: 1, gpu: a100-80gb, gpus_per_node: 1, cpu: "64", memory: 50GB}
  duration: 1h
  pods:
    - {name: a, arrivals: {rate: 1/day, count: 2}, requests: {cpu: 1, memory: 2GiB,
       nvidia.com/gpu: 1}, gpu_memory: 80GB, duration: 10min}
"""
    assert run(tmp_path, text)["pods"] == 2
    bad = run_gpumux("run", tmp_path / "s.yaml", "--set", "cluster.pools.p.memory=50Gb")
    assert bad.returncode == 2 and "cluster.pools" in bad.stderr and "GB" in bad.stderr


def test_mig_cost_share_is_two_sevenths_in_both_sections(tmp_path):
    # A cluster pod on one 2g.20gb of an A100 priced 7/h for 1 h pays 2.
    cluster = """name: mig-cost
cluster:
  pools:
    - name: a100
      gpu: a100-80gb
      gpus_per_node: 1
      cost_per_hour: 7
      sharing: {gke: {gpu-partition-size: 2g.20gb}}
  duration: 1h
  pods:
    - {name: x, requests: {nvidia.com/gpu: 1}, duration: 2h}
"""
    s = run(tmp_path, cluster)
    assert s["cost"]["allocated"] == pytest.approx(2.0, rel=1e-12)
    # A tenant alone on a 2g.20gb instance pays 2/7 of its GPU's price (was 2/8).
    tenant = """name: mig-tenant
duration: 1s
gpus:
  - {name: gpu0, model: a100-80gb, cost_per_hour: 7, mig: ["2g.20gb"]}
tenants:
  - name: t
    device: gpu0/0
    memory: 1GiB
    workload: {arrivals: {process: constant, rate: 10/s}, request: {kernels: [{name: k, duration: 1ms}]}}
"""
    path = tmp_path / "t.yaml"
    path.write_text(tenant)
    r = run_gpumux("run", path, "--json")
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)
    # gpu_cost: the whole GPU's price over the same window.
    assert t["gpu_cost"] > 0
    assert t["tenants"]["t"]["cost"] == pytest.approx(2 / 7 * t["gpu_cost"], rel=1e-12)
