"""calibration/fit/ft_vit_host.py (the `ft-vit` harness's host time per operator) recovers a
known value: points whose targets are gpumux's own latencies at t = 7 us fit back to exactly
7 us, in sample and out of sample, with zero error; `--check` passes on the value the fit wrote
and fails on any other; and the shipped value is what catalog_published.py's ft-vit requests
state. The scan's grid (0.5 us steps here) holds 7 us, so the fit can land on it exactly."""
import csv
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GPUMUX

REPO = Path(__file__).resolve().parents[2]
FIT = REPO / "calibration" / "fit"
sys.path.insert(0, str(FIT))
KNOWN_US = 7.0


def fit_script(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(FIT / "ft_vit_host.py"), "--gpumux", GPUMUX,
                           "--step-us", "0.5", "--max-us", "10", "--no-validation", *map(str, args)],
                          capture_output=True, text=True, timeout=600)


def test_the_fit_recovers_a_known_host_time_per_operator(tmp_path):
    yaml = pytest.importorskip("yaml")
    import ft_vit_host
    rows = list(csv.DictReader((FIT / "ft-vit-host.csv").open()))
    assert {r["dtype"] for r in rows} == {"fp16", "int8"}  # one fold per precision
    for r in rows:  # synthetic targets: the model's own latency at the known t
        r["target_ms"] = 0
        r["value"] = repr(ft_vit_host.predict_ms(GPUMUX, r, KNOWN_US, tmp_path))
    data = tmp_path / "synthetic.csv"
    with data.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[k for k in rows[0] if k != "target_ms"])
        w.writeheader()
        w.writerows({k: v for k, v in r.items() if k != "target_ms"} for r in rows)
    value, report = tmp_path / "value.yaml", tmp_path / "REPORT.md"
    out = fit_script("--data", data, "--value", value, "--report", report)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"t = {KNOWN_US:g} us;"), out.stdout
    assert "folds ft-vit-fp16: 7, ft-vit-int8: 7;" in out.stdout
    assert "median |error| in 0.0 %, out 0.0 %" in out.stdout
    assert yaml.safe_load(value.read_text())["per_op"] == "7000ns"
    assert "per launch" in report.read_text()
    ok = fit_script("--data", data, "--value", value, "--check")
    assert ok.returncode == 0, ok.stderr
    value.write_text("per_op: 6500ns\n")
    bad = fit_script("--data", data, "--value", value, "--check")
    assert bad.returncode == 1 and "holds 6500ns, the refit gives 7000ns" in bad.stderr


def test_the_validation_states_the_fitted_value_for_ft_vit_requests_only():
    yaml = pytest.importorskip("yaml")
    pytest.importorskip("h5py")
    sys.path.insert(0, str(REPO / "calibration" / "validation"))
    import catalog_published as cp
    shipped = yaml.safe_load((FIT / "ft-vit-host.yaml").read_text())["per_op"]
    ft = {"workload": "vit-b16", "batch": "1", "precision": "FP16", "source": "ft-vit",
          "software": "FasterTransformer C++ (fused kernels as TensorRT); CUDA 11.4"}
    assert cp.catalog_workload(ft, "inference")["host"]["per_op"] == shipped
    other = dict(ft, source="dle-bert", software="PyTorch")
    assert "host" not in cp.catalog_workload(other, "inference")
