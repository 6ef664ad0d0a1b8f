"""Device-plugin semantics through the CLI (issue 6, item 4): MPS `replicas` sets each client's
active threads (100/N %) and pinned memory (device memory / N); the MPS client limit inside a MIG
instance is scaled by its compute slices; a data-parallel tenant over MIG instances is refused
(exit 2, one line naming file:line:column and the key)."""
import json
from pathlib import Path

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def solo_mps(sharing, memory):
    return f"""\
name: replicas
duration: 1s
gpus:
  - {{name: gpu0, model: h100-sxm-80gb, sharing: {{mode: mps{sharing}}}}}
tenants:
  - name: a
    device: gpu0
    memory: {memory}
    workload:
      arrivals: {{process: closed, concurrency: 1}}
      request: {{kernels: [{{name: k, duration: 1ms, sm_fraction: 1.0}}]}}
"""


def run_json(path, *extra):
    proc = gpumux("run", path, "--json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_replicas_give_a_quarter_of_the_sms_and_of_the_memory(tmp_path):
    path = write(tmp_path, "r.yaml", solo_mps(", replicas: 4", "19GiB"))
    solo = run_json(write(tmp_path, "solo.yaml", solo_mps("", "19GiB")))["tenants"]["a"]
    quarter = run_json(path)["tenants"]["a"]
    # Full-grid compute kernel at 25 % of the SMs: 4x the 1 ms solo time (plus launch cost).
    launch = solo["latency_ns"]["p50"] - 1e6
    assert abs(quarter["latency_ns"]["p50"] - (4e6 + launch)) < 5
    assert quarter["oom_events"] == 0
    # 20 GiB > 79.25 GiB / 4: the client would be OOM-killed at start, so run refuses it as
    # validate does (one line naming the limit and where it comes from); --set of an explicit
    # limit wins.
    over = gpumux("run", path, "--json", "--set", "tenants.0.memory=20GiB")
    assert over.returncode == 2 and over.stdout == ""
    assert "MPS pinned memory limit on gpu0 (h100-sxm-80gb) has 19.81 GiB (sharing.replicas: 4" \
        in over.stderr, over.stderr
    assert gpumux("validate", path, "--set", "tenants.0.memory=20GiB").stderr == over.stderr
    raised = run_json(path, "--set", "tenants.0.memory=20GiB",
                      "--set", "gpus.0.sharing.pinned_memory_limit=30GiB")["tenants"]["a"]
    assert raised["oom_events"] == 0 and raised["completed"] > 0
    half = run_json(path, "--set", "gpus.0.sharing.active_thread_percentage=50")["tenants"]["a"]
    assert abs(half["latency_ns"]["p50"] - (2e6 + launch)) < 5


def test_mps_client_limit_inside_a_1g_instance_is_six(tmp_path):
    # MIG User Guide: the 48-client limit is lowered proportionally to the compute-instance
    # size: 48 x 1/7 -> 6 clients on a 1g; 8 clients -> 2 refused.
    path = write(tmp_path, "c.yaml", """\
name: mig-clients
duration: 200ms
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [1g.10gb], sharing: {mode: mps}}
tenants:
  - name: c
    replicas: 8
    device: gpu0/0
    workload: {arrivals: {process: poisson, rate: 10/s}, request: {kernels: [{name: k, duration: 10us}]}}
""")
    tenants = run_json(path)["tenants"]
    refused = [name for name, t in tenants.items() if t["completed"] == 0 and t["failed"] > 0]
    assert sorted(refused) == ["c-6", "c-7"]
    tenants = run_json(path, "--set", "gpus.0.sharing.cuda_version=13.1")["tenants"]
    assert all(t["failed"] == 0 for t in tenants.values())


DP_ON_MIG = """\
name: dp-mig
duration: 1s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [3g.40gb, 3g.40gb], sharing: {mode: mps}}
tenants:
  - name: trainer
    device: [gpu0/0, gpu0/1]
    workload:
      arrivals: {process: closed, concurrency: 1}
      request: {kernels: [{name: step, duration: 10ms}, {name: allreduce, duration: 1ms, collective: true}]}
"""


def test_data_parallel_tenant_over_mig_instances_is_refused_with_exit_2(tmp_path):
    path = write(tmp_path, "dp.yaml", DP_ON_MIG)
    for command in ("run", "validate"):
        proc = gpumux(command, path)
        assert proc.returncode == 2, (command, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert f"{path}:7:" in lines[0], lines[0]
        assert "tenants.0.device" in lines[0], lines[0]
        assert "MIG" in lines[0], lines[0]
