"""gpumux plan: the ranked table, --json, -o BEST.yaml reproduced by `gpumux run`, input errors
(exit 2, one line naming file/line/key), no feasible setup (exit 1). Drives $GPUMUX_BIN. The
shipped node's plan (minutes: its verdicts need long windows) is in test_plan_shipped.py
(label slow)."""
import json
import subprocess

import pytest
import yaml
from pathlib import Path

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
NODE = str(REPO / "scenarios" / "plan" / "plan-h100-node.yaml")


SMALL = """\
name: small-plan
seed: 3
duration: 4s
warmup: 500ms
plan:
  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0}]
  max_gpus: 3
tenants:
  - name: embed
    memory: 4GiB
    workload:
      arrivals: {process: poisson, rate: 200/s}
      request:
        kernels:
          - {name: enc, duration: 300us, sm_fraction: 0.5, memory_bound: 0.5, repeat: 2}
    slo: {p99: 10ms}
  - name: big
    memory: 60GiB
    workload:
      arrivals: {process: poisson, rate: 50/s}
      request:
        kernels:
          - {name: gemm, duration: 8ms, sm_fraction: 1.0, memory_bound: 0.3}
    slo: {p99: 60ms}
"""


def small(tmp_path, text=SMALL):
    path = tmp_path / "small.yaml"
    path.write_text(text)
    return str(path)


def test_small_plan_json_and_gpus_flag(tmp_path):
    path = small(tmp_path)
    plan = json.loads(gpumux("plan", path, "--json", check=0).stdout)
    # big holds 75 % of the H100: plan.shared_tenant_memory (default 0.25) keeps it off a GPU
    # whose memory it would share with embed (an SLO tenant), so two GPUs; with every sharing
    # allowed, one time-shared GPU.
    assert plan["found"] and plan["ranked"][0]["gpus"] == 2
    shared = json.loads(gpumux("plan", path, "--json", "--set", "plan.shared_tenant_memory=1",
                               check=0).stdout)
    assert shared["found"] and shared["ranked"][0]["gpus"] == 1
    # --gpus replaces plan.gpus: at 1.0/h the answer (two GPUs) costs 2.0/h.
    cheap = json.loads(gpumux("plan", path, "--json", "--gpus", "h100-sxm-80gb=1.0",
                              check=0).stdout)
    assert cheap["ranked"][0]["cost_per_hour"] == 2.0
    # Only dedicated GPUs: two of them.
    dedicated = json.loads(gpumux("plan", path, "--json", "--strategies", "dedicated",
                                  check=0).stdout)
    assert dedicated["ranked"][0]["gpus"] == 2


def test_plan_without_plan_block_takes_flags(tmp_path):
    text = SMALL.replace("plan:\n  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0}]\n"
                         "  max_gpus: 3\n", "")
    text = text.replace("    memory: 4GiB", "    device: gpu0\n    memory: 4GiB")
    text = text.replace("    memory: 60GiB", "    device: gpu0\n    memory: 60GiB")
    text = text.replace("tenants:", "gpus:\n  - {name: gpu0, model: h100-sxm-80gb, sharing: "
                        "{mode: time-slicing}}\ntenants:")
    path = small(tmp_path, text)
    proc = gpumux("plan", path)
    assert proc.returncode == 2 and "--gpus" in proc.stderr
    plan = json.loads(gpumux("plan", path, "--json", "--gpus", "h100-sxm-80gb=2.5",
                             "--max-gpus", "2", check=0).stdout)
    assert plan["found"] and plan["max_gpus"] == 2


def test_plan_input_errors_are_one_line(tmp_path):
    bad = small(tmp_path, SMALL.replace("max_gpus: 3", "max_gpus: 0"))
    proc = gpumux("plan", bad)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    assert "small.yaml:7:" in proc.stderr and "plan.max_gpus" in proc.stderr
    bad = small(tmp_path, SMALL.replace("cost_per_hour: 4.0", "cost_per_hour: 4.0, colour: red"))
    proc = gpumux("plan", bad)
    assert proc.returncode == 2 and "unknown key 'colour'" in proc.stderr
    proc = gpumux("plan", small(tmp_path), "-o", str(tmp_path / "best.h5"))
    assert proc.returncode == 2 and ".yaml" in proc.stderr
    proc = gpumux("plan", small(tmp_path), "--gpus", "h100-sxm-80gb")
    assert proc.returncode == 2 and "MODEL=PRICE" in proc.stderr
    # A planning scenario is not runnable as is.
    proc = gpumux("run", small(tmp_path))
    assert proc.returncode == 2 and "gpumux plan" in proc.stderr


def test_plan_without_feasible_setup_exits_1(tmp_path):
    path = small(tmp_path, SMALL.replace("slo: {p99: 60ms}", "slo: {p99: 5ms}"))
    proc = gpumux("plan", path, "-o", str(tmp_path / "best.yaml"))
    assert proc.returncode == 1
    assert "big" in proc.stderr and "no setup" in proc.stderr
    assert not (tmp_path / "best.yaml").exists()


MIG_10G = """\
name: mig-small
duration: 2s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [3g.40gb, 1g.10gb]}
tenants:
  - name: ocr
    device: gpu0/1
    memory: 10GiB
    workload:
      arrivals: {process: poisson, rate: 20/s}
      request:
        kernels:
          - {name: detect, duration: 4ms, sm_fraction: 0.8, memory_bound: 0.2}
"""


def test_validate_refuses_static_memory_that_cannot_fit(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(MIG_10G)
    proc = gpumux("validate", str(path))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1
    err = proc.stderr
    assert "m.yaml:8:" in err and "tenants.0.memory" in err
    assert "ocr" in err and "gpu0/1 (1g.10gb)" in err and "10 GiB" in err and "9.75 GiB" in err
    # Its kernels' memory: 8 GiB static fits, + 4 GiB per request does not.
    path.write_text(MIG_10G.replace("memory: 10GiB", "memory: 8GiB").replace(
        "      request:", "      memory_per_request: 4GiB\n      request:"))
    proc = gpumux("validate", str(path))
    assert proc.returncode == 2 and "every request would fail" in proc.stderr
    assert "memory_per_request" in proc.stderr


def test_validate_warns_about_load_beyond_solo_capacity(tmp_path):
    path = tmp_path / "m.yaml"
    # On a 1g.10gb (16 of 132 SMs, 1 of 8 memory slices) a request takes >= ~19 ms alone, so
    # the slice serves at most ~52/s: 60/s is beyond it, 20/s is not.
    path.write_text(MIG_10G.replace("memory: 10GiB", "memory: 8GiB").replace("rate: 20/s",
                                                                            "rate: 60/s"))
    proc = gpumux("validate", str(path), check=0)
    assert "warning" in proc.stderr and "ocr offers 60/s" in proc.stderr
    assert "gpu0/1 (1g.10gb) serves at most" in proc.stderr
    path.write_text(MIG_10G.replace("memory: 10GiB", "memory: 8GiB"))
    proc = gpumux("validate", str(path), check=0)
    assert proc.stderr == ""


def test_validate_planning_scenario(tmp_path):
    proc = gpumux("validate", NODE, check=0)
    assert "planning scenario" in proc.stdout
    path = small(tmp_path, SMALL.replace("memory: 60GiB", "memory: 90GiB"))
    proc = gpumux("validate", path)
    assert proc.returncode == 2 and "big" in proc.stderr and "79.25 GiB" in proc.stderr


def test_python_validate_is_the_cli_validate(tmp_path):
    """gpumux.validate goes through the same front door as `gpumux validate`: the same warnings,
    planning scenarios recognised, capacity errors raised as ScenarioError."""
    import gpumux

    path = tmp_path / "m.yaml"
    path.write_text(MIG_10G.replace("memory: 10GiB", "memory: 8GiB").replace("rate: 20/s",
                                                                            "rate: 60/s"))
    info = gpumux.validate(str(path))
    cli = gpumux_cli_warnings(str(path))
    assert info["warnings"] and info["warnings"] == cli
    assert info["planning"] is False and info["devices"]
    plan = gpumux.validate(NODE)
    assert plan["planning"] is True and plan["devices"] == [] and plan["warnings"] == []
    too_big = small(tmp_path, SMALL.replace("memory: 60GiB", "memory: 90GiB"))
    try:
        gpumux.validate(too_big)
    except gpumux.ScenarioError as e:
        assert "big" in str(e) and "79.25 GiB" in str(e)
    else:
        raise AssertionError("a tenant over the GPU's memory passed gpumux.validate")


def gpumux_cli_warnings(path):
    proc = gpumux("validate", path, check=0)
    prefix = "gpumux: warning: "
    return [line[len(prefix):] for line in proc.stderr.splitlines() if line.startswith(prefix)]


def test_plan_platform_gke_writes_what_to_apply_and_it_replays(tmp_path):
    """--platform gke -o DIR: node pools, a Pod per tenant, cluster.yaml; `gpumux run` of
    cluster.yaml (the cluster layer: pools, device plugin, workload pods) gives the plan's p99s."""
    path = small(tmp_path, SMALL.replace("  max_gpus: 3\n", "  max_gpus: 3\n  machines: "
                                         "[a3-highgpu-1g, a3-highgpu-2g]\n"))
    out = tmp_path / "deploy"
    proc = gpumux("plan", path, "--platform", "gke", "-o", str(out), check=0)
    assert "platform gke" in proc.stdout and "ranked by cost, then SLO margin" in proc.stdout
    assert "node0 a3-highgpu-" in proc.stdout
    assert (out / "best.yaml").exists() and (out / "node-pools.sh").exists()
    pools = (out / "node-pools.sh").read_text()
    assert "gcloud container node-pools create node0" in pools
    assert "--accelerator=type=nvidia-h100-80gb" in pools
    subprocess.run(["sh", "-n", str(out / "node-pools.sh")], check=True)  # a valid script
    manifests = sorted((out / "pods").iterdir())
    assert len(manifests) == 2
    for manifest in manifests:
        pod = yaml.safe_load(manifest.read_text())
        assert pod["kind"] == "Pod" and pod["apiVersion"] == "v1"
        assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 1}
        selector = pod["spec"]["nodeSelector"]
        assert all(isinstance(v, str) for v in selector.values())  # label values are strings
        assert selector["cloud.google.com/gke-accelerator"] == "nvidia-h100-80gb"
    plan = json.loads(gpumux("plan", path, "--platform", "gke", "--json", check=0).stdout)
    assert plan["platform"] == "gke" and plan["ranking"].startswith("cost")
    winner = plan["ranked"][0]
    assert winner["nodes"] and winner["cost_per_hour"] == pytest.approx(
        sum(n["cost_per_hour"] for n in winner["nodes"]))
    replay = json.loads(gpumux("run", str(out / "cluster.yaml"), "--json", check=0).stdout)
    pods = {p["pod"]: p for p in replay["workload_pods"]}
    best_run = json.loads(gpumux("run", str(out / "best.yaml"), "--json", check=0).stdout)
    for name, tenant in best_run["tenants"].items():
        assert pods[name]["latency_p99_ns"] == tenant["latency_ns"]["p99"], name


def test_plan_platform_restricts_mig_mps_and_bad_platform(tmp_path):
    path = small(tmp_path)
    plan = json.loads(gpumux("plan", path, "--platform", "device-plugin", "--json",
                             check=0).stdout)
    assert all(r["setup"] != "mig+mps" for r in plan["ranked"])
    assert any("mig+mps left out" in n for n in plan["notes"])
    proc = gpumux("plan", path, "--platform", "k8s")
    # Named as the user wrote it: the flag, not the `--set plan.platform` it becomes.
    assert proc.returncode == 2 and "--platform: " in proc.stderr and "gke" in proc.stderr
    assert "--set" not in proc.stderr
    proc = gpumux("plan", path, "--set", "plan.machines=[a9-tinygpu-1g]", "--platform", "gke")
    assert proc.returncode == 2 and "unknown machine type 'a9-tinygpu-1g'" in proc.stderr
    assert proc.stderr.count("\n") == 1
    # validate refuses it with the same line.
    text = SMALL.replace("  max_gpus: 3\n", "  max_gpus: 3\n  platform: gke\n"
                         "  machines: [a9-tinygpu-1g]\n")
    bad = small(tmp_path, text)
    plan_line, validate_line = gpumux("plan", bad).stderr, gpumux("validate", bad).stderr
    assert "unknown machine type 'a9-tinygpu-1g'" in validate_line
    assert plan_line == validate_line


def test_infeasible_plan_answers_from_the_alone_checks(tmp_path):
    path = small(tmp_path, SMALL.replace("slo: {p99: 60ms}", "slo: {p99: 9ms}"))
    proc = gpumux("plan", path)
    assert proc.returncode == 1
    assert "2 tenant(s)" in proc.stdout and "not shown to meet every SLO even alone" in proc.stdout
    plan = json.loads(gpumux("plan", path, "--json").stdout)
    assert plan["infeasible_alone"] == ["big"]
    assert plan["search"]["simulations"] <= 2


def test_source_documents_node_on_gke_deploys_and_replays(tmp_path):
    """Issue 24's check: the shipped node planned with --platform gke writes node pools and pods
    whose replay through the cluster layer gives the plan's numbers, tenant by tenant."""
    out = tmp_path / "deploy"
    gpumux("plan", NODE, "--platform", "gke", "-o", str(out), check=0)
    plan = json.loads(gpumux("plan", NODE, "--platform", "gke", "--json", check=0).stdout)
    winner = plan["ranked"][0]
    assert winner["setup"] == "best" and all(n["family"] != "mig+mps" for n in winner["nodes"])
    replay = json.loads(gpumux("run", str(out / "cluster.yaml"), "--json", check=0).stdout)
    pods = {p["pod"]: p for p in replay["workload_pods"]}
    assert set(pods) == {t["tenant"] for t in winner["tenants"]}
    best = json.loads(gpumux("run", str(out / "best.yaml"), "--json", "--fail-on-slo",
                             check=0).stdout)
    for name, tenant in best["tenants"].items():
        assert pods[name]["latency_p99_ns"] == tenant["latency_ns"]["p99"], name
        assert pods[name]["completed"] == tenant["completed"], name


# Twelve replicas of one light service: more than the exact search's 10 tenants, so the packing
# search of docs/plan.md "Many tenants" answers.
TWELVE = """\
name: twelve
seed: 7
duration: 4s
warmup: 500ms
plan:
  gpus: [{model: h100-sxm-80gb, cost_per_hour: 4.0}]
  max_gpus: 3
tenants:
  - name: svc
    replicas: 12
    memory: 2GiB
    workload:
      arrivals: {process: poisson, rate: 50/s}
      request:
        kernels:
          - {name: k, duration: 1ms, sm_fraction: 0.06, memory_bound: 0.1}
    slo: {p99: 4ms}
"""


def replay_matches_best(out):
    """`gpumux run` of the written cluster.yaml (node pools or device-plugin configs, the Pod
    manifests) against `gpumux run best.yaml`: every tenant's p99 and completed requests."""
    replay = json.loads(gpumux("run", str(out / "cluster.yaml"), "--json", check=0).stdout)
    pods = {p["pod"]: p for p in replay["workload_pods"]}
    best = json.loads(gpumux("run", str(out / "best.yaml"), "--json", "--fail-on-slo",
                             check=0).stdout)
    assert set(pods) == set(best["tenants"])
    for name, tenant in best["tenants"].items():
        assert pods[name]["latency_p99_ns"] == tenant["latency_ns"]["p99"], name
        assert pods[name]["completed"] == tenant["completed"], name


def test_many_tenants_share_one_gpu_under_mps_and_the_bound_proves_it(tmp_path):
    """12 tenants (the packing search): one H100 under MPS without limits holds them all. One
    GPU is the lower bound, so the table calls the answer optimal; best.yaml meets every SLO."""
    path = small(tmp_path, TWELVE)
    best = tmp_path / "best.yaml"
    proc = gpumux("plan", path, "-o", str(best), check=0)
    assert "more than the exact search's 10" in proc.stdout
    assert "lower bound 4.00 USD/h: the answer is optimal" in proc.stdout
    plan = json.loads(gpumux("plan", path, "--json", check=0).stdout)
    assert plan["search"]["exact"] is False
    winner = plan["ranked"][0]
    assert winner["cost_per_hour"] == 4.0 and winner["gpus"] == 1
    assert plan["search"]["lower_bound_per_hour"] == winner["cost_per_hour"]
    [gpu] = winner["configuration"]
    assert gpu["family"] == "mps" and gpu["replicas"] == 0 and len(gpu["tenants"][0]) == 12
    run = json.loads(gpumux("run", str(best), "--json", "--fail-on-slo", check=0).stdout)
    ratio = {t["tenant"]: t["worst_slo_ratio"] for t in winner["tenants"]}
    for name, tenant in run["tenants"].items():
        # The plan's ratio is p99 / the 4 ms target, from the same run.
        assert tenant["latency_ns"]["p99"] / 4e6 == pytest.approx(ratio[name], rel=1e-6), name


def test_many_tenants_mps_node_takes_the_fewest_replicas_that_hold_them(tmp_path):
    """On the device plugin every MPS client is pinned to 1/replicas of the GPU: the packing
    tries, for b nodes, the fewest replicas that hold the tenants (12 on one a3-highgpu-1g),
    writes them in the node's device-plugin config, and the replay gives the plan's numbers."""
    path = small(tmp_path, TWELVE)
    out = tmp_path / "deploy"
    gpumux("plan", path, "--platform", "device-plugin", "-o", str(out), check=0)
    plan = json.loads(gpumux("plan", path, "--platform", "device-plugin", "--json",
                             check=0).stdout)
    [node] = plan["ranked"][0]["nodes"]
    assert node["machine"] == "a3-highgpu-1g" and node["family"] == "mps"
    config = yaml.safe_load((out / "device-plugin-node0.yaml").read_text())
    assert config["sharing"]["mps"]["resources"] == [{"name": "nvidia.com/gpu", "replicas": 12}]
    replay_matches_best(out)


MIXED = """\
name: mixed
seed: 4
duration: 1s
warmup: 100ms
plan:
  gpus:
    - {model: h100-sxm-80gb, cost_per_hour: 4.0}
    - {model: a100-sxm4-40gb, cost_per_hour: 1.5}
  platform: gke
  machines: [a3-highgpu-1g, a2-highgpu-1g]
  max_gpus: 16
  max_duration: 64s   # light (about 20/s) needs ~30 s for a conclusive p99
tenants:
  - name: heavy
    replicas: 12
    memory: 50GiB
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request:
        kernels:
          - {name: k, duration: 2ms, sm_fraction: 1.0, memory_bound: 0.4}
    slo: {p99: 12ms}
  - name: light
    replicas: 2
    memory: 30GiB
    workload:
      arrivals: {process: poisson, rate: 20/s}
      request:
        kernels:
          - {name: k, duration: 1ms, sm_fraction: 0.3, memory_bound: 0.3}
    slo: {p99: 20ms}
"""


def test_many_tenants_best_mixes_machine_types_and_deploys(tmp_path):
    """14 tenants on GKE: 50 GiB ones need an H100 (a3-highgpu-1g), the two 30 GiB ones fit an
    A100 40GB (a2-highgpu-1g, cheaper) but not one H100 beside a 50 GiB tenant. No one-family
    packing mixes machine types; the refinement re-packs the last node's tenants on the A100
    nodes, so the best is cheaper than every family's row. Its node pools (two accelerators,
    time-sharing with 2 clients at least, as GKE takes) replay to the plan's numbers."""
    path = small(tmp_path, MIXED)
    plan = json.loads(gpumux("plan", path, "--json", check=0).stdout)
    assert plan["search"]["exact"] is False
    best, rows = plan["ranked"][0], [r for r in plan["ranked"][1:] if r["feasible"]]
    assert rows and all(best["cost_per_hour"] < r["cost_per_hour"] - 1e-6 for r in rows)
    machines = {n["machine"] for n in best["nodes"]}
    assert machines == {"a3-highgpu-1g", "a2-highgpu-1g"}
    for node in best["nodes"]:
        if node["machine"] == "a2-highgpu-1g":
            assert all(name.startswith("light") for name in node["pod_order"])
    assert best["cost_per_hour"] == pytest.approx(sum(n["cost_per_hour"] for n in best["nodes"]))
    out = tmp_path / "deploy"
    gpumux("plan", path, "-o", str(out), check=0)
    pools = (out / "node-pools.sh").read_text()
    subprocess.run(["sh", "-n", str(out / "node-pools.sh")], check=True)
    assert "type=nvidia-h100-80gb" in pools and "type=nvidia-tesla-a100" in pools
    assert "max-shared-clients-per-gpu=1," not in pools and "max-shared-clients-per-gpu=1\n" \
        not in pools
    replay_matches_best(out)


def test_plan_progress_lines_off_a_terminal(tmp_path):
    """stderr is a pipe here: the plan says how far it is in whole lines (the first after the
    first batch of simulations, then at most one every 10 s), never a carriage return;
    --quiet silences them."""
    import re
    import time

    path = small(tmp_path, SMALL.replace("duration: 4s", "duration: 30s"))
    started = time.monotonic()
    proc = gpumux("plan", path, check=0)
    wall = time.monotonic() - started
    lines = proc.stderr.splitlines()
    assert lines and "\r" not in proc.stderr, proc.stderr
    seconds = []
    for line in lines:
        found = re.fullmatch(r"gpumux: plan: (\d+) simulations, (\d+) s", line)
        assert found, line
        seconds.append(int(found.group(2)))
    assert all(b - a >= 9 for a, b in zip(seconds, seconds[1:])), seconds  # rounded to 1 s
    assert len(lines) <= 1 + wall / 10, (lines, wall)
    quiet = gpumux("plan", path, "--quiet", check=0)
    assert quiet.stderr == ""

    def table(stdout):  # the search line ends with the wall time, which varies
        return [line for line in stdout.splitlines() if not line.startswith("search:")]
    assert table(quiet.stdout) == table(proc.stdout)
