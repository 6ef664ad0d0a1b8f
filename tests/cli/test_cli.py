"""Command-line behaviour: exit codes, error messages, --json, --set, compare, mig, report,
SIGINT. Drives the built binary ($GPUMUX_BIN, default build/gpumux)."""
import json
import signal
import subprocess
import time
from pathlib import Path

import h5py
import pytest

from conftest import GPUMUX, run_gpumux as gpumux

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = str(REPO / "scenarios" / "quickstart.yaml")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


SMALL = """\
name: small
duration: 2s
gpus:
  - {name: gpu0, model: h100-sxm-80gb, mig: [3g.40gb, 3g.40gb], sharing: {mode: time-slicing}}
tenants:
  - name: a
    device: gpu0/0
    workload:
      arrivals: {process: poisson, rate: 100/s}
      request: {kernels: [{name: k, duration: 1ms}]}
    slo: {p99: 1ms}
  - name: b
    device: gpu0/1
    workload:
      arrivals: {process: closed, concurrency: 2}
      request: {kernels: [{name: k, duration: 5ms, memory_bound: 0.5}]}
"""


def test_version_and_help():
    out = gpumux("--version", check=0).stdout
    assert out.startswith("gpumux ")
    assert "compare" in gpumux("help", check=0).stdout
    assert "--strategies" in gpumux("help", "compare", check=0).stdout
    assert gpumux("frobnicate").returncode == 2


def test_run_json_matches_spec_shape_and_is_deterministic():
    a = json.loads(gpumux("run", QUICKSTART, "--json", check=0).stdout)
    b = json.loads(gpumux("run", QUICKSTART, "--json", check=0).stdout)
    for key in ["scenario", "seed", "status", "sim_time_ns", "events", "wall_s", "tenants",
                "devices"]:
        assert key in a
    chat = a["tenants"]["chat"]
    for key in ["device", "requests", "completed", "failed", "latency_ns", "queueing_ns",
                "slowdown_mean", "throughput_per_s", "slo_violations", "oom_events"]:
        assert key in chat
    assert set(chat["latency_ns"]) >= {"mean", "p50", "p90", "p99", "p999", "max"}
    assert a["status"] == "complete"
    a.pop("wall_s"), b.pop("wall_s")
    assert a == b


def test_seed_and_set_overrides_change_the_run():
    base = json.loads(gpumux("run", QUICKSTART, "--json", check=0).stdout)
    seeded = json.loads(gpumux("run", QUICKSTART, "--json", "--seed", "99", check=0).stdout)
    assert seeded["seed"] == 99
    assert seeded["tenants"]["chat"]["latency_ns"]["p99"] != base["tenants"]["chat"]["latency_ns"]["p99"]
    halved = json.loads(gpumux("run", QUICKSTART, "--json", "--set",
                               "tenants.0.workload.arrivals.rate=100/s", check=0).stdout)
    ratio = halved["tenants"]["chat"]["requests"] / base["tenants"]["chat"]["requests"]
    assert 0.45 < ratio < 0.55


def test_bad_inputs_exit_2_with_file_line_and_key(tmp_path):
    cases = {
        "bare-number": (SMALL.replace("duration: 1ms", "duration: 1"), "tenants.0.workload.request.kernels.0.duration"),
        "unknown-key": (SMALL.replace("duration: 2s", "duration: 2s\ndurtion: 3s"), "durtion"),
        "bad-mig": (SMALL.replace("[3g.40gb, 3g.40gb]", "[4g.40gb, 4g.40gb]"), "gpus.0.mig"),
        "bad-device": (SMALL.replace("device: gpu0/1", "device: gpu7"), "tenants.1.device"),
        "unaddressed-mig": (SMALL.replace("device: gpu0/1", "device: gpu0"), "tenants.1.device"),
        "bad-model": (SMALL.replace("h100-sxm-80gb", "h100-sxm-800gb"), "gpus.0.model"),
    }
    for name, (text, key) in cases.items():
        path = write(tmp_path, name + ".yaml", text)
        for command in (["validate", path], ["run", path]):
            proc = gpumux(*command)
            assert proc.returncode == 2, (name, proc.stderr)
            line = proc.stderr.strip()
            assert "\n" not in line, line
            assert f"{name}.yaml:" in line and key in line, (name, line)
    # An unclosed quote swallows the following lines into one value: still a one-line error.
    broken = write(tmp_path, "broken.yaml", SMALL.replace("name: small", "name: 'small"))
    proc = gpumux("validate", broken)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    missing = gpumux("run", str(tmp_path / "nope.yaml"))
    assert missing.returncode == 2 and "nope.yaml" in missing.stderr
    assert gpumux("run", QUICKSTART, "--set", "novalue").returncode == 2
    assert gpumux("run", QUICKSTART, "--no-such-flag").returncode == 2


def test_no_half_written_output_on_bad_input(tmp_path):
    out = tmp_path / "out.h5"
    path = write(tmp_path, "bad.yaml", SMALL.replace("rate: 100/s", "rate: -5/s"))
    assert gpumux("run", path, "-o", str(out)).returncode == 2
    assert not out.exists()
    assert list(tmp_path.glob("out.h5*")) == []


def test_notes_name_the_assumed_profile_defaults_a_run_used():
    hybrid = str(REPO / "scenarios" / "hybrid-h100.yaml")
    notes = json.loads(gpumux("run", hybrid, "--json", check=0).stdout)["notes"]
    assert any("context_switch" in n and "assumption" in n for n in notes), notes
    # Set by the scenario, it is no longer a profile assumption of this run.
    tuned = json.loads(gpumux("run", hybrid, "--json", "--set", "gpus.0.sharing.context_switch=40us",
                              check=0).stdout)["notes"]
    assert not any("context_switch" in n for n in tuned), tuned
    assert "note:" in gpumux("run", hybrid, check=0).stdout
    # A dedicated GPU uses no unmeasured sharing parameter.
    assert "notes" not in json.loads(gpumux("run", QUICKSTART, "--json", check=0).stdout)


def test_fail_on_slo_exits_1():
    path = QUICKSTART
    assert gpumux("run", path, "--quiet", "--fail-on-slo", check=0).stdout == ""
    proc = gpumux("run", path, "--quiet", "--fail-on-slo", "--set", "tenants.0.slo.p99=1ms")
    assert proc.returncode == 1
    assert "SLO missed" in proc.stderr


def test_compare_side_by_side_and_hdf5(tmp_path):
    path = write(tmp_path, "small.yaml", SMALL)
    out = tmp_path / "cmp.h5"
    proc = gpumux("compare", path, "--strategies", "mig,time-slicing,mps,dedicated", "-o",
                  str(out), check=0)
    for label in ["mig", "time-slicing", "mps", "dedicated"]:
        assert label in proc.stdout
    data = json.loads(gpumux("compare", path, "--strategies", "mig,mps", "--json", check=0).stdout)
    assert [d["strategy"] for d in data] == ["mig", "mps"]
    # MIG isolates a from b's memory-bound load; under MPS they share the whole GPU.
    assert data[0]["devices"]["gpu0/0"]["sms"] == 60
    assert data[1]["devices"]["gpu0"]["sms"] == 132
    report = gpumux("report", str(out), check=0).stdout
    assert "dedicated" in report
    assert gpumux("compare", path, "--strategies", "warp-drive").returncode == 2
    # GPU cost: every physical GPU's price over the measured window (3.6 per hour each);
    # the dedicated baseline needs one GPU per tenant.
    priced = write(tmp_path, "priced.yaml", SMALL.replace("model: h100-sxm-80gb,", "model: h100-sxm-80gb, cost_per_hour: 3.6,"))
    costs = json.loads(gpumux("compare", priced, "--strategies", "mig,dedicated", "--json", check=0).stdout)
    window_s = costs[0]["sim_time_ns"] * 1e-9  # warmup 0: the window ends after the drain
    assert costs[0]["gpu_cost"] == pytest.approx(3.6 * window_s / 3600, rel=1e-9)
    assert costs[1]["gpu_cost"] == pytest.approx(2 * costs[0]["gpu_cost"], rel=0.05)


def test_mig_listing_and_check():
    listing = gpumux("mig", "h100-sxm-80gb", check=0).stdout
    for profile in ["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]:
        assert profile in listing
    assert "all-balanced" in listing
    ok = gpumux("mig", "h100-sxm-80gb", "--check", "3g.40gb,2g.20gb,1g.10gb,1g.10gb", check=0)
    assert "fits" in ok.stdout
    assert gpumux("mig", "h100-sxm-80gb", "--check", "all-balanced", check=0)
    bad = gpumux("mig", "h100-sxm-80gb", "--check", "4g.40gb,4g.40gb")
    assert bad.returncode == 1 and "4g.40gb" in bad.stdout
    assert gpumux("mig", "h100-sxm-80gb", "--check", "all-sideways").returncode == 2
    assert gpumux("mig", "rtx-9090").returncode == 2


def test_report_of_missing_or_foreign_file(tmp_path):
    assert gpumux("report", str(tmp_path / "none.h5")).returncode == 2
    junk = write(tmp_path, "junk.h5", "not hdf5")
    proc = gpumux("report", junk)
    assert proc.returncode == 2 and "not a gpumux result" in proc.stderr


def test_sigint_writes_partial_result_marked_interrupted(tmp_path):
    long = write(tmp_path, "long.yaml", """\
name: long
duration: 100000s
gpus: [{name: gpu0, model: h100-sxm-80gb}]
tenants:
  - name: t
    device: gpu0
    workload:
      arrivals: {process: poisson, rate: 900/s}
      request: {kernels: [{name: k, duration: 1ms}]}
""")
    out = tmp_path / "partial.h5"
    proc = subprocess.Popen([GPUMUX, "run", long, "-o", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    with h5py.File(out, "r") as f:
        status = f.attrs["status"]
        status = status.decode() if isinstance(status, bytes) else status
        assert status == "interrupted"
        assert 0 < f.attrs["sim_time_ns"] < 100000 * 10**9
        assert len(f["requests"]) > 0
