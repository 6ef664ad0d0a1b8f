"""TensorFlow's host time split into the runtime's and a harness's (calibration/fit/tf_runtime.py):
the shipped tensorflow-xla dispatch per kernel (kernel-families.yaml) is the value its report
(calibration/fit/TF-RUNTIME.md) fitted, its calibration points are published points that the
validation leaves out, and the harness fit's closed form recovers a known per-request time."""
import csv
import random
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIT = REPO / "calibration" / "fit"
PUBLISHED = REPO / "calibration" / "validation" / "data" / "published" / "small_batch.csv"


def report():
    return (FIT / "TF-RUNTIME.md").read_text()


def test_the_shipped_dispatch_per_kernel_is_the_reports_fit():
    yaml = pytest.importorskip("yaml")
    families = yaml.safe_load((REPO / "calibration/workloads/kernel-families.yaml").read_text())
    entry = families["runtimes"]["tensorflow-xla"]["host_per_op"]
    assert "fitted" in entry and "TF-RUNTIME.md" in entry["fitted"]
    value = re.fullmatch(r"([0-9.]+)us", entry["value"])
    assert value, entry["value"]
    fitted = re.search(r"\*\*t_op = ([0-9.]+) us\*\*", report())
    assert fitted and float(fitted.group(1)) == float(value.group(1))
    errors = re.search(r"t_op = [^\n]*in sample ([0-9.]+) %, out of sample ([0-9.]+) %",
                       report())
    assert errors and f"in sample {errors.group(1)} %" in entry["fitted"]
    assert f"out of sample {errors.group(2)} %" in entry["fitted"]
    # The other TensorFlow runtime keeps its stated assumption: nothing fits it here.
    assert "assumption" in families["runtimes"]["tensorflow"]["host_per_op"]


def test_the_calibration_points_are_published_and_the_rest_stay_validation():
    published = {r["id"]: r for r in csv.DictReader(PUBLISHED.open())}
    ids = set()
    for name, runtime in (("tfxla-dispatch.csv", "tensorflow-xla"),
                          ("tf-bert-harness.csv", "tensorflow-xla")):
        points = list(csv.DictReader((FIT / name).open()))
        assert len(points) >= 2, name
        for p in points:
            assert p["runtime"] == runtime and p["metric"] == "latency", p["id"]
            assert float(published[p["id"]]["value"]) == float(p["value"]), p["id"]
            assert p["batch"] == "1", p["id"]  # batch 1: where the host sets the time
            ids.add(p["id"])
    # FasterTransformer's batch-8 TF-XLA rows and every fp16 TF1 BERT row are validation points.
    assert not {i for i in ids if "-tfxla-b8-" in i}
    fp16 = [r["id"] for r in published.values() if r["source"] == "dle-bert-tf"
            and r["precision"] == "FP16 (AMP)"]
    assert len(fp16) == 48 and not ids & set(fp16)


def test_the_harness_closed_form_recovers_a_known_per_request_time():
    sys.path.insert(0, str(FIT))
    pytest.importorskip("yaml")
    import tf_runtime

    rng = random.Random(7)
    for _ in range(50):
        h = rng.uniform(0, 5)
        p0 = [rng.uniform(0.5, 20) for _ in range(rng.randint(1, 6))]
        rows = [{"target_ms": p + h} for p in p0]  # the law exactly: measured = p(0) + H
        assert tf_runtime.closed_form_h(p0, rows) == pytest.approx(h, abs=1e-9)
        # Off the law, H minimises the squared relative error: no nudge does better.
        noisy = [{"target_ms": (p + h) * rng.uniform(0.8, 1.2)} for p in p0]
        best = tf_runtime.closed_form_h(p0, noisy)

        def loss(x):
            return sum(((p + x) / r["target_ms"] - 1) ** 2 for p, r in zip(p0, noisy))

        for step in (1e-3, -1e-3):
            if best + step >= 0:
                assert loss(best) <= loss(best + step) + 1e-12
    # A cost cannot be negative: measured below the GPU time alone gives 0, not less.
    assert tf_runtime.closed_form_h([5.0, 6.0], [{"target_ms": 4.0}, {"target_ms": 5.0}]) == 0.0


BARE_LOOP = """name: ft-tfxla
seed: 1
duration: 2s
warmup: 200ms
gpus: [{name: g, model: a100-80gb, sharing: {mode: exclusive}}]
tenants:
  - name: w
    device: g
    workload:
      model: bert-base
      batch: 1
      seq_len: %d
      dtype: fp16
      runtime: tensorflow-xla
      host: {per_request: 0ns, input_bytes: 0B, output_bytes: 0B}
      arrivals: {process: closed, concurrency: 1, think: 1ms}
"""


def test_the_cli_runs_a_bare_session_run_loop_at_the_fitted_dispatch(tmp_path):
    """`gpumux run` of FasterTransformer's TF-XLA batch-1 request with no harness time (the
    `host:` block) gives the report's in-sample prediction: the shipped dispatch per kernel paces
    it (flat in sequence length), and `gpumux inspect` names the runtime as its origin."""
    import json

    from conftest import run_gpumux

    predicted = dict(re.findall(r"\| bertb-ft-a100-tfxla-b1-s(\d+) \|[^\n]*?\| [0-9.]+ ms \|"
                                r" [^|]+\| ([0-9.]+) ms", report()))
    assert set(predicted) == {"32", "128", "384"}
    for seq, expected in predicted.items():
        path = tmp_path / f"s{seq}.yaml"
        path.write_text(BARE_LOOP % int(seq))
        out = json.loads(run_gpumux("run", path, "--json", check=0).stdout)
        mean_ms = out["tenants"]["w"]["latency_ns"]["mean"] / 1e6
        assert mean_ms == pytest.approx(float(expected), rel=2e-3), seq
    text = run_gpumux("inspect", tmp_path / "s32.yaml", check=0).stdout
    assert "per_request user" in text and "per_op runtime" in text, text


def test_the_resnet50_harness_is_one_per_request_time_for_both_runtimes():
    """Stage 3: the profiles' host_per_request.tensorflow and .tensorflow-xla are one value (the
    same Estimator harness; XLA's own host cost is stage 1's dispatch per kernel), the report's
    fit, with the report's errors in the provenance, on both DGX A100 profiles."""
    yaml = pytest.importorskip("yaml")
    stage3 = report()[report().index("## Stage 3"):]
    fitted = re.search(r"\*\*H = ([0-9.]+) ms\*\* per request, both runtimes", stage3)
    errors = re.search(r"in sample ([0-9.]+) %, out of sample ([0-9.]+) %", stage3)
    assert fitted and errors
    for name in ("a100-sxm4-40gb", "a100-80gb"):
        doc = yaml.safe_load((REPO / "calibration" / "profiles" / f"{name}.yaml").read_text())
        entries = [doc["host_per_request"][r] for r in ("tensorflow", "tensorflow-xla")]
        for entry in entries:
            value = re.fullmatch(r"([0-9.]+)us", entry["value"])
            assert value and float(value.group(1)) == pytest.approx(float(fitted.group(1)) * 1e3)
            assert "TF-RUNTIME.md" in entry["fitted"] and "stage 3" in entry["fitted"]
            assert f"in sample {errors.group(1)} %" in entry["fitted"], name
            assert f"out of sample {errors.group(2)} %" in entry["fitted"], name
        assert entries[0]["value"] == entries[1]["value"], name
    # Its calibration points are the published ResNet-50 rows, one table per fold.
    published = {r["id"]: r for r in csv.DictReader(PUBLISHED.open())}
    points = list(csv.DictReader((FIT / "tf-host.csv").open()))
    assert len({p["source"] for p in points}) == 4
    for p in points:
        assert float(published[p["id"]]["value"]) == float(p["value"]), p["id"]


HARNESS_POINT = """name: dle-rn50
seed: 1
duration: 2s
warmup: 200ms
gpus: [{name: g, model: a100-sxm4-40gb, sharing: {mode: exclusive}}]
tenants:
  - name: w
    device: g
    workload: {model: resnet50, batch: %d, dtype: %s, runtime: %s,
               arrivals: {process: closed, concurrency: 1, think: 1ms}}
"""


def test_the_cli_runs_the_resnet50_harness_at_the_fitted_time(tmp_path):
    """`gpumux run` of the ResNet-50 rows with the shipped profile (no `host:` block) gives the
    report's stage-3 in-sample predictions: the profile's per-request time is the fit."""
    import json

    from conftest import run_gpumux

    stage3 = report()[report().index("## Stage 3"):]
    rows = re.findall(r"\| (rn50-tf1-[^ ]+) \| resnet50 (tensorflow(?:-xla)?) b(\d+) (\w+) on "
                      r"a100-sxm4-40gb \|[^|]+\|[^|]+\| ([0-9.]+) ms", stage3)
    assert len(rows) == 16
    for point, runtime, batch, dtype, expected in rows[::5]:
        path = tmp_path / f"{point}.yaml"
        path.write_text(HARNESS_POINT % (int(batch), dtype, runtime))
        out = json.loads(run_gpumux("run", path, "--json", check=0).stdout)
        mean_ms = out["tenants"]["w"]["latency_ns"]["mean"] / 1e6
        assert mean_ms == pytest.approx(float(expected), rel=2e-3), point
