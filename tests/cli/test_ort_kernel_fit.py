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


def _point(point_id):
    import sys

    sys.path.insert(0, str(REPO / "calibration" / "fit"))
    from fit_points import latency_points

    rows = latency_points(REPO / "calibration/fit/ort-latency.csv", "onnxruntime")
    return next(r for r in rows if r["id"] == point_id)


def test_the_scan_moves_the_shipped_term_and_nothing_else(tmp_path):
    """The fit states F as the tenant's runtime_kernel_fixed_cost: at the shipped value that is
    the built-in prediction to the nanosecond (the fit scans what the product applies; its old
    profile copies lost the profile's memory latencies with its name and moved the GEMMs'
    split-K choice, docs/calibration.md), and for a
    GPU-bound point each microsecond more adds one microsecond per kernel launched (the law,
    runtime_fixed_cost.hpp: a request alone takes sum(durations) + n g)."""
    pytest.importorskip("yaml")
    import sys

    from conftest import GPUMUX, run_gpumux

    sys.path.insert(0, str(REPO / "calibration" / "fit"))
    import ort_kernel_cost as fit

    for point_id in ("bertb-ort-a100-b1-s8", "bertb-ort-a100-b32-s128"):
        point = _point(point_id)
        built_in = fit.predict_ms(GPUMUX, point, None, tmp_path)
        stated = fit.predict_ms(GPUMUX, point, fit.baked_us(), tmp_path)
        assert stated == built_in, point_id
    # The check the script offers (`--check`) says the same.
    import subprocess

    proc = subprocess.run([sys.executable, str(REPO / "calibration/fit/ort_kernel_cost.py"),
                           "--gpumux", GPUMUX, "--check"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    # Batch 32 x 128 tokens is GPU-bound: at a fixed clock latency(F + 1 us) - latency(F) = n x
    # 1 us, n the kernels the request launches (inspect's kernel rows: count x repeat each). The
    # fit's own scenario with `power: none`: its back-to-back FP16 GEMMs cap the A100's clock
    # (the power law's tensor term, docs/strategies.md "Power and clocks"), and longer gaps
    # between kernels lower the board's draw and so raise its clock.
    import json

    import yaml

    point = _point("bertb-ort-a100-b32-s128")
    scenario = tmp_path / f"{point['id']}.yaml"

    def at_boost_ms(f_us: float) -> float:
        fit.predict_ms(GPUMUX, point, f_us, tmp_path)  # writes `scenario`
        scen = yaml.safe_load(scenario.read_text())
        scen["gpus"][0]["power"] = "none"
        scenario.write_text(yaml.safe_dump(scen, sort_keys=False))
        out = run_gpumux("run", scenario, "--json", "-q").stdout
        return json.loads(out)["tenants"]["t"]["latency_ns"]["mean"] / 1e6

    low = at_boost_ms(2.0)
    high = at_boost_ms(3.0)

    shown = json.loads(run_gpumux("inspect", scenario, "--json", check=0).stdout)
    launches = sum(int(k["count"]) * int(k["repeat"]["value"])
                   for k in shown["tenants"][0]["kernels"])
    assert launches > 50
    assert (high - low) * 1e6 == pytest.approx(launches * 1e3, abs=launches * 1e-3 + 1)


def test_a_stated_runtime_kernel_fixed_cost_is_refused_where_it_cannot_act(tmp_path, gpumux):
    """One line naming the file, line and key, exit 2: negative, above 1 s, under a CUDA graph,
    and on a workload that is not a catalog model."""
    base = ("name: t\nduration: 1s\ngpus: [{name: g, model: a100-sxm4-40gb}]\ntenants:\n"
            "  - name: a\n    device: g\n    workload:\n"
            "      arrivals: {process: closed, concurrency: 1}\n")
    model = "      model: bert-base\n      runtime: onnxruntime\n"
    for extra, why in (
            (model + "      runtime_kernel_fixed_cost: -1us\n", "runtime_kernel_fixed_cost"),
            (model + "      runtime_kernel_fixed_cost: 2s\n", "at most 1s per kernel"),
            (model + "      cuda_graph: true\n      runtime_kernel_fixed_cost: 3us\n",
             "outside a CUDA graph"),
            ("      request: {kernels: [{name: k, duration: 1ms}]}\n"
             "      runtime_kernel_fixed_cost: 3us\n", "belongs to a catalog workload")):
        path = tmp_path / "s.yaml"
        path.write_text(base + extra)
        rc, out, err = gpumux("validate", path)
        assert rc == 2, extra + err + out
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and "s.yaml:" in lines[0] and why in lines[0], extra + err
