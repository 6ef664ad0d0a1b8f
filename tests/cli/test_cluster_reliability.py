"""Issue 27 at the command line and in Python: nothing silently ignored, every bad input one
located line and exit 2, and the result-file views that refuse what they cannot show.

The loader-level cases (overflowing times, GPU counts, the cluster work budget, openb UTF-8) are
in tests/unit/test_cluster_reliability.cpp; here: --seed on a cluster replay (CLI and Python),
negative seeds, GPUMUX_QUEUE, the openb file's line through `validate`, report/plot on a cluster
file, the plan tenant limit shared by `validate` and `plan`, and Python's argument types.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import GPUMUX, run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]

CLUSTER = """\
name: issue-27
cluster:
  pools:
    - name: h100
      count: 2
      gpu: h100-sxm-80gb
      gpus_per_node: 2
  pods:
    - name: p
      arrivals: {process: poisson, rate: 1/s, count: 20}
      requests: {nvidia.com/gpu: 1}
      duration: 3s
"""


def one_error_line(out):
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    return lines[0]


def arrivals(out):
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_seed_applies_to_a_cluster_replay(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    default = arrivals(gpumux("run", str(path), "--json"))
    seeded = arrivals(gpumux("run", str(path), "--json", "--seed", "9"))
    by_set = arrivals(gpumux("run", str(path), "--json", "--set", "seed=9"))
    assert seeded == by_set
    assert seeded["end_time_s"] != default["end_time_s"]  # other Poisson arrivals
    # --seed comes after --set, as for a device scenario.
    assert arrivals(gpumux("run", str(path), "--json", "--set", "seed=3", "--seed", "9")) == seeded


@pytest.mark.parametrize("seed", [["--seed", "-1"], ["--seed=-1"], ["--seed=x"],
                                  ["--seed=18446744073709551616"]])
def test_bad_seed_is_one_line_exit_2(tmp_path, seed):
    """--seed -1 wrapped to 2**64 - 1 (program_options' unsigned conversion)."""
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    for command in ("run", "compare"):
        args = [command, str(path), *seed]
        if command == "compare":
            args = [command, str(REPO / "scenarios/quickstart.yaml"), "--strategies", "mps",
                    *seed]
        line = one_error_line(gpumux(*args))
        assert "--seed: expected an integer from 0 to 18446744073709551615" in line, line


def test_unknown_queue_is_refused(tmp_path):
    env = dict(os.environ, GPUMUX_QUEUE="bogus")
    line = one_error_line(gpumux("run", str(REPO / "scenarios/quickstart.yaml"),
                                 "--set", "duration=10ms", "--set", "warmup=0s", env=env))
    assert "GPUMUX_QUEUE: unknown event queue 'bogus'; choose heap, calendar or ladder" in line
    env["GPUMUX_QUEUE"] = "ladder"
    assert gpumux("run", str(REPO / "scenarios/quickstart.yaml"), "--set", "duration=10ms",
                  "--set", "warmup=0s", env=env).returncode == 0


def test_openb_non_utf8_is_refused_at_its_line(tmp_path):
    (tmp_path / "nodes.csv").write_bytes(
        b"sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,1,V100\nn1,1000,1024,1,P\x95100\n")
    (tmp_path / "pods.csv").write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time,deletion_time\n"
        "p0,1000,1024,1,1000,0,10\n")
    path = tmp_path / "c.yaml"
    path.write_text("name: o\ncluster:\n  openb: {nodes: nodes.csv, pods: pods.csv}\n")
    for command in ("validate", "run"):
        line = one_error_line(gpumux(command, str(path), cwd=tmp_path))
        assert "nodes.csv:3:17: not UTF-8 text (byte 0x95" in line, line


def test_report_and_plot_of_a_cluster_file(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    out = tmp_path / "c.h5"
    assert gpumux("run", str(path), "-o", str(out), "--quiet").returncode == 0
    report = gpumux("report", str(out))
    assert report.returncode == 0, report.stderr
    assert "cluster replay" in report.stdout and "pods: 20" in report.stdout, report.stdout
    assert json.loads(gpumux("report", str(out), "--json").stdout)["kind"] == "cluster"
    for args in (["report", str(out), "--html", str(tmp_path / "r.html")],
                 ["plot", str(out), "-o", str(tmp_path / "f.png")]):
        line = one_error_line(gpumux(*args))
        assert "a cluster replay's file" in line, line
        assert not (tmp_path / "r.html").exists() and not (tmp_path / "f.png").exists()


PLAN = """\
name: many
duration: 100ms
plan:
  gpus: [{{model: h100-sxm-80gb, cost_per_hour: 4.0}}]
  max_gpus: 3
tenants:
{tenants}"""
TENANT = """\
  - name: t{i}
    workload:
      arrivals: {{process: poisson, rate: 10/s}}
      request: {{kernels: [{{name: k, duration: 1ms}}]}}
"""


def test_plan_tenant_limit_is_the_same_in_validate_and_plan(tmp_path):
    path = tmp_path / "plan.yaml"
    # 64: the width of the planner's tenant sets (above 10 the scalable search runs).
    path.write_text(PLAN.format(tenants="".join(TENANT.format(i=i) for i in range(65))))
    validate = one_error_line(gpumux("validate", str(path)))
    plan = one_error_line(gpumux("plan", str(path)))
    message = "gpumux plan handles up to 64 tenants, the scenario has 65"
    assert message in validate and message in plan
    assert f"{path}:7:3: tenants: " in validate, validate  # at the `tenants:` list
    path.write_text(PLAN.format(tenants="".join(TENANT.format(i=i) for i in range(64))))
    assert gpumux("validate", str(path)).returncode == 0


def python_api():
    return pytest.importorskip("gpumux")


def test_python_seed_applies_to_a_cluster_run(tmp_path):
    api = python_api()
    path = tmp_path / "c.yaml"
    path.write_text(CLUSTER)
    cli = arrivals(gpumux("run", str(path), "--json", "--seed", "9"))
    result = api.run(str(path), seed=9)
    assert result.summary["end_time_s"] == cli["end_time_s"]
    with pytest.raises(ValueError, match="seed must be a whole number, not 'x'"):
        api.run(str(path), seed="x")


def test_python_checks_argument_types(tmp_path):
    api = python_api()
    quickstart = str(REPO / "scenarios/quickstart.yaml")
    with pytest.raises(TypeError, match="record_requests must be True or False, not str 'no'"):
        api.run(quickstart, record_requests="no")
    with pytest.raises(TypeError, match="return_results must be True or False"):
        api.compare(quickstart, ["mps"], return_results=1)
    plan = str(REPO / "scenarios/plan/plan-h100-node.yaml")
    with pytest.raises(api.ScenarioError, match=r"jobs \(0: the cores\) must be from 0 to 1024"):
        api.plan(plan, jobs=-1)
    with pytest.raises(TypeError, match="jobs must be a whole number"):
        api.plan(plan, jobs="2")
    with pytest.raises(TypeError, match="client must be a dask.distributed.Client"):
        api.plan(plan, client=5)
    with pytest.raises(TypeError, match="client must be a dask.distributed.Client"):
        api.sweep(quickstart, {"duration": ["10ms"]}, client=5)


def test_sigterm_stops_plan_and_writes_nothing(tmp_path):
    """plan installs the stop handlers: SIGTERM during the search exits 143 with one line, and
    -o is not written (issue 27: no handler, and the search ran on)."""
    import signal
    import time
    tenant = """\
  - name: t{i}
    workload:
      arrivals: {{process: poisson, rate: 50/s}}
      request: {{kernels: [{{name: k, duration: 2ms}}]}}
    slo: {{p99: 20ms}}
"""
    path = tmp_path / "plan.yaml"
    path.write_text(PLAN.format(tenants="".join(tenant.format(i=i) for i in range(10)))
                    .replace("duration: 100ms", "duration: 2s"))
    best = tmp_path / "best.yaml"
    proc = subprocess.Popen([GPUMUX, "plan", str(path), "-o", str(best), "--jobs", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "gpumux: plan: interrupted (SIGTERM): the search stopped; nothing written" in err
    assert not best.exists()
    assert [p.name for p in tmp_path.iterdir() if ".tmp." in p.name] == []


MIG_CLUSTER = """\
name: big-mig-parted
cluster:
  pools:
    - name: a100
      count: 1
      gpu: a100-80gb
      gpus_per_node: 1
      sharing:
        mig_parted: {file: mig.yaml, config: all-1g}
  pods:
    - name: p
      count: 1
      requests: {nvidia.com/mig-1g.10gb: 1}
      duration: 1s
"""


@pytest.mark.parametrize("padding,refused", [(200 * 1024, False), (300 * 1024, True)])
def test_mig_parted_config_size_limit(tmp_path, padding, refused):
    # A long flow list of filters: yaml-cpp's ~1 KB per value made a 3 MB list of one-letter
    # items peak at 1.5 GB; beyond 256 KiB the file is refused before parsing, naming it and the
    # limit; below, it is read as before.
    items = ",".join(['"0x20B510DE"'] * (padding // 13))  # A100-80GB's PCI id, repeated
    (tmp_path / "mig.yaml").write_text(
        "version: v1\nmig-configs:\n  all-1g:\n"
        f"    - device-filter: [{items}]\n      devices: all\n      mig-enabled: true\n"
        "      mig-devices: {1g.10gb: 7}\n")
    (tmp_path / "c.yaml").write_text(MIG_CLUSTER)
    out = gpumux("validate", str(tmp_path / "c.yaml"), cwd=tmp_path)
    if refused:
        line = one_error_line(out)
        assert "mig.yaml" in line and "over the 256 KiB limit for a mig-parted config" in line, line
    else:
        assert out.returncode == 0, out.stderr
