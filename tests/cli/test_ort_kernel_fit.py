"""The onnxruntime runtime's device time per kernel (kernel-families.yaml
`runtimes.onnxruntime.kernel_fixed_cost`) is the value calibration/fit/ort_kernel_cost.py fitted
(its report, calibration/fit/ORT-KERNEL.md), and its calibration points are published points
that the validation leaves out."""
import csv
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_the_shipped_value_is_the_reports_fit():
    yaml = pytest.importorskip("yaml")
    families = yaml.safe_load((REPO / "calibration/workloads/kernel-families.yaml").read_text())
    entry = families["runtimes"]["onnxruntime"]["kernel_fixed_cost"]
    assert "fitted" in entry and "ORT-KERNEL.md" in entry["fitted"]
    value = re.fullmatch(r"([0-9.]+)us", entry["value"])
    assert value, entry["value"]
    report = (REPO / "calibration/fit/ORT-KERNEL.md").read_text()
    fitted = re.search(r"\*\*F = ([0-9.]+) us\*\*", report)
    assert fitted and float(fitted.group(1)) == float(value.group(1))
    # The report's in- and out-of-sample errors are the ones the provenance quotes.
    errors = re.search(r"in sample ([0-9.]+) %, out of sample ([0-9.]+) %\.", report)
    assert errors and f"in sample {errors.group(1)} %" in entry["fitted"]
    assert f"out of sample {errors.group(2)} %" in entry["fitted"]


def test_the_calibration_points_are_published_onnxruntime_latencies():
    points = list(csv.DictReader((REPO / "calibration/fit/ort-latency.csv").open()))
    assert len(points) >= 5
    published = {r["id"]: r for r in
                 csv.DictReader((REPO / "calibration/validation/data/published/solo.csv").open())}
    for p in points:
        assert p["runtime"] == "onnxruntime" and p["metric"] == "latency", p["id"]
        assert float(published[p["id"]]["value"]) == float(p["value"]), p["id"]
    # Tally's server stays a validation point (calibration/fit/SOURCE.md says why).
    assert "bert-ort-a100-b1" not in {p["id"] for p in points}


def test_the_fitting_scripts_read_a_runtimes_points_in_one_way(tmp_path):
    """calibration/fit/fit_points.py: the latency in ms whatever the unit, and a point of
    another runtime or metric, or an unknown unit, refused naming the file and the point."""
    import sys

    sys.path.insert(0, str(REPO / "calibration" / "fit"))
    from fit_points import latency_points

    head = "id,source,model,batch,runtime,metric,value,unit\n"
    path = tmp_path / "p.csv"
    path.write_text(head + "a,s,bert-base,1,onnxruntime,latency,1500,us\n"
                    "b,s,bert-base,8,onnxruntime,latency,2.5,ms\n"
                    "c,s,bert-base,8,tensorflow,latency,0.003,s\n")
    with pytest.raises(SystemExit, match=r"p\.csv: c: only onnxruntime latency"):
        latency_points(path, "onnxruntime")
    rows = latency_points(path, ("onnxruntime", "tensorflow"))
    assert [r["target_ms"] for r in rows] == pytest.approx([1.5, 2.5, 3.0])
    path.write_text(head + "d,s,bert-base,1,onnxruntime,throughput,900,img/s\n")
    with pytest.raises(SystemExit, match=r"p\.csv: d: only onnxruntime latency"):
        latency_points(path, "onnxruntime")
    path.write_text(head + "e,s,bert-base,1,onnxruntime,latency,3,min\n")
    with pytest.raises(SystemExit, match=r"p\.csv: e: unit 'min'"):
        latency_points(path, "onnxruntime")
    # Both scripts take their points through it (the review's twin, folded).
    for script in ("ort_kernel_cost.py", "tf_runtime.py"):
        text = (REPO / "calibration" / "fit" / script).read_text()
        assert "latency_points(" in text and "def points(" not in text, script
