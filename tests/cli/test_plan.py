"""gpumux plan: the ranked table, --json, -o BEST.yaml reproduced by `gpumux run`, input errors
(exit 2, one line naming file/line/key), no feasible setup (exit 1). Drives $GPUMUX_BIN. The
shipped node's plan (minutes: its verdicts need long windows) is in test_plan_shipped.py
(label slow)."""
import json
import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GPUMUX = os.environ.get("GPUMUX_BIN") or str(REPO / "build" / "gpumux")
NODE = str(REPO / "scenarios" / "plan" / "plan-h100-node.yaml")


def gpumux(*args, check=None):
    proc = subprocess.run([GPUMUX, *args], capture_output=True, text=True, timeout=300)
    if check is not None:
        assert proc.returncode == check, proc.stderr + proc.stdout
    return proc


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
    assert plan["found"] and plan["ranked"][0]["gpus"] == 1
    # --gpus replaces plan.gpus: at 1.0/h the answer costs 1.0/h.
    cheap = json.loads(gpumux("plan", path, "--json", "--gpus", "h100-sxm-80gb=1.0",
                              check=0).stdout)
    assert cheap["ranked"][0]["cost_per_hour"] == 1.0
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
