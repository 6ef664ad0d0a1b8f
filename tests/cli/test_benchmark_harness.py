"""A catalog tenant timed by a benchmark harness (`workload.harness:`, docs/workloads.md
"Benchmark harness"): its host time per request is the runtime's `host_per_request` plus the GPU
profile's `harness_per_request` of that harness, which `gpumux inspect` shows with its origin; the
latency moves by exactly that time and the GPU's busy time does not; bad values exit 2 with one
line naming file, line and key. Also: the shipped calibration set's MLPerf rows name the harness
stage 1 fits, and its demoBERT rows none."""
import csv
import json
from pathlib import Path

import pytest

from conftest import run_gpumux

ROOT = Path(__file__).resolve().parents[2]


def scenario(tmp_path: Path, extra: str = "", name="s.yaml", gpu="a100-80gb") -> Path:
    lines = ["name: h", "seed: 3", "duration: 2s", "warmup: 0s",
             "gpus:", f"  - {{name: gpu0, model: {gpu}, sharing: {{mode: exclusive}}}}",
             "tenants:", "  - name: api", "    device: gpu0", "    workload:",
             "      arrivals: {process: constant, rate: 50/s}",
             "      model: resnet50", "      batch: 1", "      dtype: int8"]
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def time_alone(path: Path) -> dict:
    tenant = json.loads(run_gpumux("inspect", path, "--json", check=0).stdout)["tenants"][0]
    return tenant["time_alone"]


def test_latency_moves_by_the_harness_time_and_busy_time_does_not(tmp_path):
    plain = scenario(tmp_path, name="plain.yaml")
    timed = scenario(tmp_path, "      harness: mlperf-loadgen\n", name="timed.yaml")
    terms = time_alone(timed)
    assert terms["harness"] == "mlperf-loadgen" and terms["harness_ns"] > 0
    assert "harness mlperf-loadgen (profile a100-80gb harness_per_request.mlperf-loadgen)" in \
        terms["host_origin"]
    assert time_alone(plain)["harness"] == "none" and time_alone(plain)["harness_ns"] == 0
    # the runtime's own term is not the harness's
    assert terms["host_per_request_ns"] == time_alone(plain)["host_per_request_ns"]
    a = json.loads(run_gpumux("run", plain, "--json", check=0).stdout)
    b = json.loads(run_gpumux("run", timed, "--json", check=0).stdout)
    la, lb = a["tenants"]["api"]["latency_ns"], b["tenants"]["api"]["latency_ns"]
    assert lb["mean"] - la["mean"] == pytest.approx(terms["harness_ns"], abs=1.0)
    assert a["tenants"]["api"]["completed"] == b["tenants"]["api"]["completed"]
    assert b["devices"]["gpu0"]["sm_busy"] == pytest.approx(a["devices"]["gpu0"]["sm_busy"],
                                                            rel=1e-6)


def test_inspect_text_shows_the_harness(tmp_path):
    text = run_gpumux("inspect", scenario(tmp_path, "      harness: mlperf-loadgen\n"),
                      check=0).stdout
    assert "benchmark harness mlperf-loadgen: " in text
    assert "harness mlperf-loadgen (profile a100-80gb" in text


@pytest.mark.parametrize("extra, gpu, line, key, message", [
    ("      harness: mlperf-lodgen\n", "a100-80gb", 15, "harness", "mlperf-loadgen"),
    ("      harness: tensorrt\n", "a100-80gb", 15, "harness", "is a runtime"),
    ("      harness: mlperf-loadgen\n      phase: training\n", "a100-80gb", 15, "harness",
     "times inference requests"),
    # a profile without the harness's time (no calibration point on it yet) names what it has
    ("      harness: mlperf-loadgen\n", "l4-24gb", 15, "harness", "l4-24gb"),
])
def test_bad_values_exit_2_with_file_line_key(tmp_path, extra, gpu, line, key, message):
    path = scenario(tmp_path, extra, gpu=gpu)
    done = run_gpumux("run", path, "--json")
    assert done.returncode == 2, done.stdout + done.stderr
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert f"{path.name}:{line}" in err, err
    assert key in err and message in err, err


def test_a_bad_harness_in_a_calibration_file_is_one_line(tmp_path):
    data = tmp_path / "h.csv"
    data.write_text("id,source,model,batch,dtype,profile,metric,value,unit,harness\n"
                    "a,s,resnet50,1,int8,l4-24gb,latency,400,us,mlperf-lodgen\n")
    done = run_gpumux("calibrate", str(data), "--fit", "kernel_fixed_cost", timeout=600)
    assert done.returncode == 2, done.stdout + done.stderr
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1 and f"{data}:2" in err and "harness" in err, err


def test_the_calibration_set_says_who_timed_each_point():
    rows = list(csv.DictReader((ROOT / "calibration/fit/solo-latency.csv").open()))
    for r in rows:
        expected = "mlperf-loadgen" if r["source"].startswith("mlperf-inf") else ""
        assert r["harness"] == expected, r["id"]
