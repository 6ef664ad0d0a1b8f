"""`gpumux compare` keeps `--set gpus.N.sharing.KEY` overrides in the variants it builds (issue 6,
item 7), refuses a `mode` that contradicts the strategy (one line, exit 2), and its overview
reports tenants with an SLO separately from best-effort ones."""
import json
from pathlib import Path

from conftest import run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]

# An exclusive GPU (not MPS): before the fix `--strategies mps` rebuilt `sharing:` and dropped
# the override. Two tenants: one with an SLO, one best-effort, so the overview has both groups.
SCENARIO = """\
name: cmp
duration: 2s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [3g.40gb, 3g.40gb], sharing: {mode: exclusive}}
tenants:
  - name: online
    device: gpu0/0
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request: {kernels: [{name: k, duration: 1ms, sm_fraction: 1.0}]}
    slo: {p99: 50ms}
  - name: batch
    device: gpu0/1
    workload:
      arrivals: {process: poisson, rate: 20/s}
      request: {kernels: [{name: k, duration: 20ms, sm_fraction: 1.0}]}
"""


def scenario(tmp_path):
    path = tmp_path / "cmp.yaml"
    path.write_text(SCENARIO)
    return str(path)


def compare_json(*args):
    proc = gpumux("compare", *args, "--json")
    assert proc.returncode == 0, proc.stderr
    return {s["strategy"]: s for s in json.loads(proc.stdout)}


def test_mps_keeps_active_thread_percentage(tmp_path):
    path = scenario(tmp_path)
    plain = compare_json(path, "--strategies", "mps")["mps"]
    capped = compare_json(path, "--strategies", "mps", "--set",
                          "gpus.0.sharing.active_thread_percentage=25")["mps"]
    # A compute-bound full-grid kernel capped at 25 % of the SMs takes 4x as long: the online
    # tenant's 1 ms kernel >= 4 ms every time, and the batch tenant's 20 ms kernel 80 ms, which
    # overloads it (20/s x 80 ms) where uncapped it ran at 40 % load. (The online p50 alone
    # cannot tell: uncapped, it often waits behind a whole 20 ms batch kernel.)
    assert capped["tenants"]["online"]["latency_ns"]["p50"] >= 3_900_000
    slow = capped["tenants"]["batch"]["latency_ns"]["p50"]
    fast = plain["tenants"]["batch"]["latency_ns"]["p50"]
    assert slow >= 80_000_000 and slow > 3 * fast


def test_mig_plus_mps_keeps_the_override_too(tmp_path):
    path = scenario(tmp_path)
    plain = compare_json(path, "--strategies", "mig+mps")["mig+mps"]
    capped = compare_json(path, "--strategies", "mig+mps", "--set",
                          "gpus.0.sharing.active_thread_percentage=25")["mig+mps"]
    assert (capped["tenants"]["batch"]["latency_ns"]["p50"]
            > 2 * plain["tenants"]["batch"]["latency_ns"]["p50"])


def test_contradicting_mode_is_refused_in_one_line(tmp_path):
    path = scenario(tmp_path)
    proc = gpumux("compare", path, "--strategies", "mps", "--set",
                  "gpus.0.sharing.mode=time-slicing")
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "--set gpus.0.sharing.mode" in lines[0]
    assert "mps" in lines[0] and "time-slicing" in lines[0]
    # The same mode as the strategy is no contradiction.
    assert gpumux("compare", path, "--strategies", "mps", "--set",
                  "gpus.0.sharing.mode=mps").returncode == 0


def test_overview_separates_slo_and_best_effort_tenants(tmp_path):
    path = scenario(tmp_path)
    summaries = compare_json(path, "--strategies", "mig")
    tenants = summaries["mig"]["tenants"]
    assert tenants["online"]["slo_ns"] == {"p99": 50_000_000}
    assert "slo_ns" not in tenants["batch"]
    table = gpumux("compare", path, "--strategies", "mig").stdout
    header = next(line for line in table.splitlines() if line.startswith("strategy"))
    for column in ("SLO thrpt", "SLO worst p99", "BE thrpt", "BE worst p99"):
        assert column in header
    row = next(line for line in table.splitlines() if line.startswith("mig "))
    # The best-effort tenant's 20 ms kernels set the BE tail, not the SLO tail (~1 ms).
    cells = [c for c in row.split("  ") if c.strip()]
    slo_p99, be_p99 = cells[4].strip(), cells[6].strip()
    assert slo_p99.endswith("ms") and float(slo_p99.split()[0]) < 10
    assert be_p99.endswith("ms") and float(be_p99.split()[0]) >= 20


# One meaning per word (issue 24 item 4): a time-sliced GPU with `replicas: 4` (four time-sliced
# slots), a 50 GiB tenant and a small one. Under MPS `replicas: 4` would pin each client to
# 79.2 GiB / 4 = 19.8 GiB: the 50 GiB tenant could not start.
MODE_SWITCH = """\
name: mode-switch
duration: 3s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, sharing: {mode: time-slicing, replicas: 4}}
tenants:
  - name: big
    device: gpu0
    memory: 50GiB
    workload:
      arrivals: {process: poisson, rate: 50/s}
      request: {kernels: [{name: k, duration: 2ms, sm_fraction: 0.5}]}
    slo: {p99: 100ms}
  - name: small
    device: gpu0
    memory: 4GiB
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request: {kernels: [{name: k, duration: 1ms, sm_fraction: 0.3}]}
"""


def _numbers(summary):
    return {name: (t["completed"], t["failed"], t["oom_events"], t["latency_ns"]["p99"])
            for name, t in summary["tenants"].items()}


def test_set_mode_mps_builds_the_device_compare_mps_builds(tmp_path):
    path = tmp_path / "switch.yaml"
    path.write_text(MODE_SWITCH)
    by_set = gpumux("run", str(path), "--json", "--set", "gpus.0.sharing.mode=mps")
    assert by_set.returncode == 0, by_set.stderr
    by_compare = gpumux("compare", str(path), "--strategies", "mps", "--json")
    assert by_compare.returncode == 0, by_compare.stderr
    set_summary, compare_summary = json.loads(by_set.stdout), json.loads(by_compare.stdout)[0]
    assert _numbers(set_summary) == _numbers(compare_summary)
    assert set_summary["devices"] == compare_summary["devices"]
    assert all(t["oom_events"] == 0 for t in set_summary["tenants"].values())
    # The same with the file already in MPS: compare keeps the file's replicas as --set does.
    mps_file = tmp_path / "mps.yaml"
    mps_file.write_text(MODE_SWITCH.replace("mode: time-slicing, replicas: 4",
                                            "mode: mps, replicas: 2").replace("50GiB", "30GiB"))
    same = gpumux("run", str(mps_file), "--json")
    again = gpumux("compare", str(mps_file), "--strategies", "mps", "--json")
    assert same.returncode == 0 and again.returncode == 0, same.stderr + again.stderr
    assert _numbers(json.loads(same.stdout)) == _numbers(json.loads(again.stdout)[0])


def test_replicas_given_with_the_mode_keeps_its_mps_meaning_and_the_error_says_so(tmp_path):
    path = tmp_path / "switch.yaml"
    path.write_text(MODE_SWITCH)
    args = ["--set", "gpus.0.sharing.mode=mps", "--set", "gpus.0.sharing.replicas=4"]
    checked = gpumux("validate", str(path), *args)
    assert checked.returncode == 2
    message = checked.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "tenants.0.memory" in message and "19.81 GiB" in message, message
    assert "sharing.replicas: 4 under mps pins each client to memory / 4" in message, message
    # run refuses what validate refuses, with the same line (one code path), before simulating.
    ran = gpumux("run", str(path), *args)
    assert ran.returncode == 2 and ran.stderr.strip() == message, ran.stderr
    assert ran.stdout == ""


def test_python_run_and_sweep_refuse_what_validate_refuses(tmp_path):
    import pytest
    gpumux_py = pytest.importorskip("gpumux")
    if not hasattr(gpumux_py, "run"):
        pytest.skip("gpumux package: put python/ on PYTHONPATH too")
    path = tmp_path / "switch.yaml"
    path.write_text(MODE_SWITCH)
    overrides = {"gpus.0.sharing.mode": "mps", "gpus.0.sharing.replicas": 4}
    with pytest.raises(gpumux_py.ScenarioError, match="19.81 GiB"):
        gpumux_py.validate(str(path), overrides=overrides)
    with pytest.raises(gpumux_py.ScenarioError, match="19.81 GiB"):
        gpumux_py.run(str(path), overrides=overrides)
    with pytest.raises(gpumux_py.ScenarioError, match="19.81 GiB"):
        gpumux_py.sweep(str(path), {"gpus.0.sharing.replicas": [4]},
                        overrides={"gpus.0.sharing.mode": "mps"}, processes=1)
