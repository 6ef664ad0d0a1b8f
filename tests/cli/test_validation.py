"""Validation scripts (calibration/validation/): run both against the repo's data copies and the
built binary ($GPUMUX_BIN, default build/gpumux), and pin their headline results.

Thresholds are the measured values (README of calibration/validation) plus a margin of about a
third, so that a change to the MIG geometry in calibration/profiles/a100-sxm4-40gb.yaml, to the
scaling law, or to the MPS sharing maths that moves the agreement with the measurements shows up
here, while harmless numeric noise (grid refinements, numpy versions) does not.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GPUMUX = os.path.abspath(os.environ.get("GPUMUX_BIN") or str(REPO / "build" / "gpumux"))
VALIDATION = REPO / "calibration" / "validation"
# The scripts need numpy/scipy/yaml; run them with the interpreter running the tests.
PYTHON = sys.executable


def run_script(name, tmp_path):
    out_json = tmp_path / f"{name}.json"
    report = tmp_path / f"{name}.md"
    proc = subprocess.run(
        [PYTHON, str(VALIDATION / f"{name}.py"), "--gpumux", GPUMUX, "--report", str(report),
         "--json", str(out_json)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report.read_text().startswith("# ")
    return json.loads(out_json.read_text())


@pytest.fixture(scope="module")
def miso(tmp_path_factory):
    pytest.importorskip("scipy")
    pytest.importorskip("yaml")
    return run_script("miso_mig", tmp_path_factory.mktemp("miso"))


@pytest.fixture(scope="module")
def gavel(tmp_path_factory):
    pytest.importorskip("yaml")
    return run_script("gavel_mps", tmp_path_factory.mktemp("gavel"))


def test_miso_uses_repo_data_only():
    for script in ("miso_mig.py", "gavel_mps.py"):
        assert "/work/shared" not in (VALIDATION / script).read_text()
    assert (VALIDATION / "data" / "miso" / "SOURCE.md").exists()
    assert (VALIDATION / "data" / "miso" / "LICENSE").exists()
    assert (VALIDATION / "data" / "gavel" / "SOURCE.md").exists()
    assert (VALIDATION / "data" / "gavel" / "LICENSE").exists()


def test_miso_data_as_expected(miso):
    models = miso["models"]
    assert sorted(models) == ["bert_train4", "resnet_train128", "transformer_train32"]
    assert len(models["bert_train4"]["slices"]) == 4  # no 1g.5gb run for bert
    t = dict(zip(models["transformer_train32"]["slices"], models["transformer_train32"]["times_s"]))
    assert t["1g.5gb"] == pytest.approx(0.2246, abs=5e-4)
    assert t["7g.40gb"] == pytest.approx(0.0366, abs=5e-4)


def test_miso_leave_one_out_errors(miso):
    s = miso["summary"]
    # f = 1 law (the brief's model): LOO median abs error measured 15.1 %; resnet (launch /
    # host bound, barely scales) is the outlier with up to 80 %.
    assert s["gpumux(D,m)"]["loo_median_abs"] < 0.20
    assert s["gpumux(D,m)"]["per_model"]["transformer_train32"]["loo_median_abs"] < 0.13  # 9.4 %
    # With sm_fraction fitted: 7.0 %; with a per-iteration think time: 4.6 %.
    assert s["gpumux(D,m,f)"]["loo_median_abs"] < 0.10
    assert s["gpumux(D,m)+think"]["loo_median_abs"] < 0.07
    # In-sample the bandwidth term must help over SM-count only (7.9 % vs 10.2 %).
    assert s["gpumux(D,m)"]["fit_median_abs"] < s["sm-only"]["fit_median_abs"]
    # On the A100 the naive 1/7 rule and SM-only scaling coincide (14 SMs per compute slice).
    assert s["naive-1/7"]["loo_median_abs"] == pytest.approx(s["sm-only"]["loo_median_abs"])


def test_miso_end_to_end_simulator_matches_formula(miso):
    e2e = miso["e2e"]
    assert e2e is not None and len(e2e["rows"]) == 10  # 5 slices x (plain, +think)
    assert e2e["max_rel_diff"] < 1e-6
    assert e2e["requests_match"]


def test_gavel_structure(gavel):
    assert gavel["n_jobs"] == 26
    assert gavel["n_pairs"] == 330 and gavel["n_dropped"] == 21
    # 21.8 % of pairs lose total throughput when co-located (impossible with alpha = 0).
    assert 0.15 < gavel["frac_S_below_1"] < 0.30


def test_gavel_alpha_estimate(gavel):
    fm = gavel["fit_m"]
    # Measured: best alpha 0.40, flat 0.35-0.50; alpha = 0 is clearly worse than the best.
    assert 0.2 <= fm["best_alpha"] <= 0.6
    assert fm["ci"][0] > 0.0
    assert fm["best_rmse"] < fm["rmse_alpha0"]
    # The model-free lower bound among losing pairs agrees (measured 0.41).
    assert 0.25 < gavel["alpha_min_median_of_S_below_1"] < 0.6


def test_gavel_end_to_end_simulator_matches_law(gavel):
    e2e = gavel["e2e"]
    assert e2e["max_rel_diff"] < 1e-6
    # The chosen pair must exercise the interference term.
    assert abs(e2e["rate_a"] - e2e["rate0_a"]) + abs(e2e["rate_b"] - e2e["rate0_b"]) > 0.05


@pytest.fixture(scope="module")
def report_all(tmp_path_factory):
    """run_all.py: every validation, one REPORT.md (written to a temporary directory)."""
    pytest.importorskip("scipy")
    pytest.importorskip("yaml")
    pytest.importorskip("h5py")
    tmp = tmp_path_factory.mktemp("all")
    proc = subprocess.run(
        [PYTHON, str(VALIDATION / "run_all.py"), "--gpumux", GPUMUX, "--outdir", str(tmp),
         "--report", str(tmp / "REPORT.md"), "--json", str(tmp / "all.json")],
        capture_output=True, text=True, timeout=300, cwd=tmp)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return tmp


def test_run_all_report_well_formed(report_all):
    text = (report_all / "REPORT.md").read_text()
    assert text.startswith("# Validation report")
    assert "gpumux" in text and "Generated 20" in text
    data = json.loads((report_all / "all.json").read_text())
    assert {"MIG", "time-slicing"} <= set(data["summary"])
    table = [l for l in text.splitlines() if l.startswith("| MIG |") or l.startswith("| time-slicing |")]
    assert len(table) == len(data["rows"]) + 2  # every point plus the two summary lines
    for row in data["rows"]:
        assert row["measured"] > 0 and row["predicted"] > 0
        assert abs(row["error"] - (row["predicted"] / row["measured"] - 1)) < 1e-9
        assert abs(row["error"]) <= 0.25 or row["reason"], row  # > 25 % needs a written reason
    for script in ("miso_mig.md", "gavel_mps.md", "timeslicing.md"):
        assert (report_all / script).read_text().startswith("# ")


def test_timeslicing_against_published_a100(report_all):
    s = json.loads((report_all / "all.json").read_text())["summary"]["time-slicing"]
    # Measured with the profile defaults: 21 points, median 3.2 %, max 9.0 %.
    assert s["n"] == 21
    assert s["median_abs"] < 0.06
    assert s["max_abs"] < 0.15
    assert "/work/shared" not in (VALIDATION / "timeslicing.py").read_text()
    assert (VALIDATION / "data" / "timeslicing" / "SOURCE.md").exists()
