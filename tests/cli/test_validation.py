"""Validation scripts (calibration/validation/): run both against the repo's data copies and the
built binary ($GPUMUX_BIN, default build/gpumux), and pin their headline results.

Thresholds are the measured values (README of calibration/validation) plus a margin of about a
third, so that a change to the MIG geometry in calibration/profiles/a100-sxm4-40gb.yaml, to the
scaling law, or to the MPS sharing maths that moves the agreement with the measurements shows up
here, while harmless numeric noise (grid refinements, numpy versions) does not.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GPUMUX

pytestmark = pytest.mark.slow  # ctest label `slow` (tests/CMakeLists.txt)

REPO = Path(__file__).resolve().parents[2]
VALIDATION = REPO / "calibration" / "validation"
# The scripts need numpy/scipy/yaml; run them with the interpreter running the tests.
PYTHON = sys.executable


def run_script(name, tmp_path, extra=()):
    out_json = tmp_path / f"{name}.json"
    report = tmp_path / f"{name}.md"
    proc = subprocess.run(
        [PYTHON, str(VALIDATION / f"{name}.py"), "--gpumux", GPUMUX, "--report", str(report),
         "--json", str(out_json), *extra],
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
    # A subset (every 11th pair, 30 pairs) keeps the suite fast; run_all.py runs all 330.
    return run_script("gavel_mps", tmp_path_factory.mktemp("gavel"), ("--subset", "30"))


def test_miso_uses_repo_data_only():
    for script in ("miso_mig.py", "gavel_mps.py", "nos_mps.py"):
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
    assert gavel["n_pairs_simulated"] == 30
    # Predicted with the law: there is no fitted interference parameter left.
    assert "alpha" not in json.dumps(gavel["summary"]).lower()
    assert "interference:" not in (VALIDATION / "gavel_mps.py").read_text()


def test_gavel_every_pair_simulated_and_errors_computed(gavel):
    rows = gavel["rows"]
    assert len(rows) == 2 * gavel["n_pairs_simulated"]
    for k in range(0, len(rows), 2):  # both members of each pair, in order
        assert rows[k]["pair"] == rows[k + 1]["pair"]
        assert rows[k]["job"] == rows[k]["pair"][0] and rows[k + 1]["job"] == rows[k]["pair"][1]
    for r in rows:
        assert 0 < r["measured"] <= 1 and 0 < r["predicted"] <= 1
        assert r["error"] == pytest.approx(r["predicted"] / r["measured"] - 1, abs=1e-12)
    s = gavel["summary"]
    rel = sorted(abs(r["error"]) for r in rows)
    assert s["max_abs_rel"] == pytest.approx(rel[-1])
    assert s["n_points"] == len(rows)


def test_gavel_mapping_reproduces_isolated_throughput(gavel):
    # Each job's kernels alone must give its measured V100 iteration time (the solo baseline).
    assert len(gavel["solo_rel_err"]) == 26
    assert gavel["summary"]["max_solo_rel_err"] < 0.02


def test_gavel_pair_totals_physical(gavel):
    # MPS can neither beat two whole GPUs (each r <= 1, total <= 2) nor, with the aggregate HBM
    # conserved and the L2 penalty bounded, fall clearly below taking turns (total 1). The old
    # alpha law pushed totals below 1 and the double-booked SM solver gave 2.0 for full-grid pairs.
    for k in range(0, len(gavel["rows"]), 2):
        a, b = gavel["rows"][k], gavel["rows"][k + 1]
        assert a["predicted_raw"] <= 1.03 and b["predicted_raw"] <= 1.03, (a, b)
        assert 0.97 <= a["predicted_raw"] + b["predicted_raw"] <= 2.03, (a, b)


def test_gavel_law_residency_and_idle_filling():
    """Two copies of a GPU-bound full-grid job: with MPS clients in launch order they take turns
    (0.5 each: no SM is held twice); interleaved (the default) they split the SMs at a round end,
    so each runs its compute phase on half the SMs and its memory phase at full speed (HBM has
    room): r = 1 / (2 (1 - m) + m) each. Two copies of a host-bound small-batch job each keep
    their solo throughput (they fill each other's idle GPU time)."""
    pytest.importorskip("yaml")
    sys.path.insert(0, str(VALIDATION))
    try:
        import gavel_mps as gm
    finally:
        sys.path.pop(0)
    P = gm.load_pairs()
    jobs = gm.job_mapping(P)
    idx = {j["name"]: i for i, j in enumerate(jobs)}
    busy, idle = idx["ResNet-50 (batch size 128)"], idx["ResNet-18 (batch size 16)"]
    assert jobs[busy]["gpu_busy"] > 0.99 and jobs[busy]["f"] == 1.0
    assert jobs[idle]["gpu_busy"] < 0.5
    import tempfile
    groups = [("solo-busy", [busy]), ("solo-idle", [idle]), ("busy", [busy, busy]),
              ("idle", [idle, idle])]
    with tempfile.TemporaryDirectory() as td:
        fifo = gm.run_batch(GPUMUX, groups, jobs, gm.launch_overhead_ms(), Path(td), "fifo",
                            "launch_order")
        split = gm.run_batch(GPUMUX, groups, jobs, gm.launch_overhead_ms(), Path(td), "law")
    for got, expected in ((fifo, 0.5), (split, 1.0 / (2.0 - jobs[busy]["m"]))):
        r = [got[f"busy-{i}"] / got["solo-busy-0"] for i in (0, 1)]
        assert all(abs(x - expected) <= 0.05 * expected for x in r), (r, expected)
        r = [got[f"idle-{i}"] / got["solo-idle-0"] for i in (0, 1)]
        assert all(x >= 0.95 for x in r), r


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
    assert {"MIG", "time-slicing", "MPS"} == set(data["summary"])
    table = [l for l in text.splitlines()
             if l.startswith(("| MIG |", "| time-slicing |", "| MPS |"))]
    assert len(table) == len(data["rows"]) + 3  # every point plus the three summary lines
    assert "alpha" not in text.lower()  # no fitted interference factor left
    for row in data["rows"]:
        assert row["measured"] > 0 and row["predicted"] > 0
        assert abs(row["error"] - (row["predicted"] / row["measured"] - 1)) < 1e-9
        if row["mechanism"] != "MPS":
            assert abs(row["error"]) <= 0.25 or row["reason"], row  # > 25 % needs a written reason
    for mech, s in data["summary"].items():  # the unexplained count is what the rows say
        rows = [r for r in data["rows"] if r["mechanism"] == mech]
        assert s["n"] == len(rows)
        assert s["over_25_unexplained"] == sum(1 for r in rows
                                               if abs(r["error"]) > 0.25 and not r["reason"])
    for script in ("miso_mig.md", "gavel_mps.md", "nos_mps.md", "timeslicing.md"):
        assert (report_all / script).read_text().startswith("# ")


def test_timeslicing_against_published_a100(report_all):
    s = json.loads((report_all / "all.json").read_text())["summary"]["time-slicing"]
    # Measured with the profile defaults: 21 points, median 3.2 %, max 9.0 %.
    assert s["n"] == 21
    assert s["median_abs"] < 0.06
    assert s["max_abs"] < 0.15
    assert "/work/shared" not in (VALIDATION / "timeslicing.py").read_text()
    assert (VALIDATION / "data" / "timeslicing" / "SOURCE.md").exists()


def test_mps_against_gavel_and_nos(report_all):
    data = json.loads((report_all / "all.json").read_text())
    g = data["gavel"]
    # All 330 pairs (660 points). Measured: median |error| 32.1 % (23.6 % on pairs whose measured
    # total is >= 1); trivial predictors r = 0.5 / r = 1 give 36.3 % / 48.4 %.
    assert g["n_points"] == 660
    assert g["median_abs_rel"] < 0.40
    assert g["median_abs_rel_S_ge_1"] < 0.30
    assert g["median_abs_rel"] < min(g["baselines_median_abs_rel"].values())
    assert 0.97 <= g["min_pred_S"] and g["max_pred_S"] <= 2.03
    nos = [r for r in data["rows"] if r["source"].startswith("nos") and r["mechanism"] == "MPS"]
    assert [r["setup"].split()[0] for r in nos] == ["3", "5", "7"]
    pred = [r["predicted"] for r in nos]
    assert pred[0] < pred[1] < pred[2]
    # Measured -32.5 / -26.3 / -22.6 %: gpumux hides each pod's CPU time behind the others' GPU
    # work; the measurements do not (nos-mps-a100.md).
    assert all(abs(r["error"]) < 0.40 for r in nos)
